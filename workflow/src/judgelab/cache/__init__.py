"""The persistent request cache under every backend: a rerun or a crash never pays twice.

* :mod:`.store` - :class:`~.store.RequestCache` (the ``wal`` mode, one host) and
  :class:`~.store.CacheConfig` (the config keys ``cache``, ``cache_mode``, ``cache_lease``);
* :mod:`.shards` - the ``shards`` mode (jobs on several nodes sharing a network filesystem);
* :mod:`.claims` - claims with a lease, so a request in flight is sent once;
* :mod:`.pending` - answers a failed write left in a side file, imported at the next open;
* :mod:`.sqlite` - connections, schema, row writes, the digest of every stored answer,
  :class:`~.sqlite.CacheError`, the checks of a file and its WAL before opening; :mod:`.keys` -
  cache keys; :mod:`.fsdetect` - network filesystems; :mod:`.filehash` - model-file hashes
  memoised beside the cache;
* :mod:`.readonly` - a cache file read with its WAL, in memory, writing nothing beside it;
* :mod:`.tools` - ``judgelab cache check | merge | salvage``.

The cached client in front of a backend is :class:`judgelab.llm.client.CachedClient`.
"""
