#!/usr/bin/env bash
# Start a real single-node SLURM on this machine (localhost) for tests/test_slurm.py and for
# trying profiles/slurm by hand. Idempotent: a second call finds it up and only checks it.
#
#   bash .ci/slurm-up.sh      # installs what is missing, starts munged, slurmctld, slurmd
#   bash .ci/slurm-down.sh    # stops exactly the daemons this script started (by their pids)
#
# What it does, as root, with no standard input:
#   1. installs Debian's slurmctld, slurmd, slurm-client and munge with apt when absent, and
#      snakemake-executor-plugin-slurm with pip when absent;
#   2. writes $JUDGELAB_SLURM_DIR/slurm.conf (default /tmp/judgelab-slurm): one node, this
#      machine's real CPUs and memory (from `slurmd -C`), reached at 127.0.0.1, one partition
#      ($JUDGELAB_SLURM_PARTITION, default `debug`), no cgroups (proctrack/linuxproc, task/none),
#      select/cons_tres with cores and memory as consumable resources, no accounting database
#      (status queries go through squeue: MinJobAge keeps finished jobs visible for 10 minutes),
#      state, spool and logs under the same folder; /etc/slurm/slurm.conf becomes a symlink to it
#      (only when that path is absent or already our symlink), so sinfo/sbatch/srun find it;
#   3. starts munged (as the munge user; reused when one already answers), slurmctld and slurmd,
#      records their pids under $JUDGELAB_SLURM_DIR/pids, waits until the node is idle and
#      `srun hostname` runs.
# A SLURM that is already up and not ours (sinfo works without our pid files) is used as it is.
set -euo pipefail

STATE=${JUDGELAB_SLURM_DIR:-/tmp/judgelab-slurm}
PARTITION=${JUDGELAB_SLURM_PARTITION:-debug}
PYTHON=${PYTHON:-python3}
CONF=$STATE/slurm.conf
ETC_CONF=/etc/slurm/slurm.conf
PIDS=$STATE/pids

say() { echo "slurm-up: $*"; }
die() { echo "slurm-up: ERROR: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (it installs packages and starts daemons)"

# -- 1. packages -------------------------------------------------------------------------------
missing=()
for tool in slurmctld slurmd sinfo sbatch srun squeue scontrol munged munge unmunge; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing slurmctld slurmd slurm-client munge (missing: ${missing[*]})"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
fi
if ! "$PYTHON" -c "import snakemake_executor_plugin_slurm" 2>/dev/null; then
    say "installing snakemake-executor-plugin-slurm"
    "$PYTHON" -m pip install --quiet "snakemake-executor-plugin-slurm>=2.0,<3"
fi

alive() {  # alive PIDFILE NAME: the pid in PIDFILE runs a process whose name starts with NAME
    local pid; pid=$(cat "$1" 2>/dev/null) || return 1
    [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == "$2"* ]]
}

node_idle() { sinfo -h -p "$PARTITION" -o '%T' 2>/dev/null | grep -qx 'idle'; }

wait_idle() {  # wait_idle SECONDS: until the node is idle (a finished job leaves it "completing")
    for _ in $(seq "$1"); do node_idle && return 0; sleep 1; done
    return 1
}

# -- already up? -------------------------------------------------------------------------------
if alive "$PIDS/slurmctld.pid" slurmctld && alive "$PIDS/slurmd.pid" slurmd \
        && sinfo -h -p "$PARTITION" -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated|completing)'; then
    say "already up (pids $(cat "$PIDS/slurmctld.pid") $(cat "$PIDS/slurmd.pid"))"
    if wait_idle 30; then  # not while jobs run: srun would wait for them
        timeout 60 srun -p "$PARTITION" -N1 -n1 hostname >/dev/null || die "srun hostname failed"
        wait_idle 30 || die "the node is not idle 30 s after srun hostname"
    fi
    sinfo
    exit 0
fi
if [ ! -d "$PIDS" ] && command -v sinfo >/dev/null && [ -e "$ETC_CONF" ] && [ ! -L "$ETC_CONF" ] \
        && sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed)'; then
    say "a SLURM that this script did not start is up; using it as it is"
    sinfo
    exit 0
fi

# -- 2. configuration --------------------------------------------------------------------------
if [ -e "$ETC_CONF" ] && ! { [ -L "$ETC_CONF" ] && [ "$(readlink "$ETC_CONF")" = "$CONF" ]; }; then
    die "$ETC_CONF exists and is not this script's symlink to $CONF; not touching it"
fi
# leftovers of an earlier run that died: stop our own daemons before starting fresh ones
bash "$(dirname "$0")/slurm-down.sh" --quiet || true

mkdir -p "$STATE"/{ctld,spool,log} "$PIDS"
host=$(hostname -s)
# `slurmd -C` prints this machine's node line: NodeName=<host> CPUs=.. ... RealMemory=..
node=$(slurmd -C | head -1)
[[ "$node" == NodeName=* ]] || die "slurmd -C printed no node line: $node"
node_hw=${node#NodeName=* }
cat > "$CONF" <<EOF
# written by .ci/slurm-up.sh: a single-node SLURM on localhost for tests (no accounting, no cgroups)
ClusterName=judgelab
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$PIDS/slurmctld.pid
SlurmdPidFile=$PIDS/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# a job without --mem gets 1 GB per CPU, not the whole node (the plugin always passes --mem)
DefMemPerCPU=1000
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
# finished jobs stay visible to "squeue --states=all" (the status command of profiles/slurm) for 10 min
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 $node_hw State=UNKNOWN
PartitionName=$PARTITION Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
mkdir -p "$(dirname "$ETC_CONF")"
ln -sfn "$CONF" "$ETC_CONF"
export SLURM_CONF=$CONF
say "wrote $CONF (node: $host $node_hw)"

# -- 3. daemons --------------------------------------------------------------------------------
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    say "munged already answers; using it"
else
    if [ ! -s /etc/munge/munge.key ]; then
        say "creating /etc/munge/munge.key"
        mkdir -p /etc/munge
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
        chown munge:munge /etc/munge/munge.key
        chmod 0400 /etc/munge/munge.key
    fi
    install -d -o munge -g munge -m 0755 /run/munge
    install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
    rm -f /run/munge/munged.pid
    runuser -u munge -- /usr/sbin/munged
    cp /run/munge/munged.pid "$PIDS/munged.pid"
    for _ in $(seq 20); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.5; done
    munge -n | unmunge >/dev/null || die "munged does not answer (see /var/log/munge/munged.log)"
    say "munged started (pid $(cat "$PIDS/munged.pid"))"
fi

# -c: a clean start, no jobs or node states of an earlier run
slurmctld -c -f "$CONF" || die "slurmctld failed to start (see $STATE/log/slurmctld.log)"
slurmd -f "$CONF" || die "slurmd failed to start (see $STATE/log/slurmd.log)"

if ! wait_idle 60; then
    sinfo -N -l >&2 || true
    tail -20 "$STATE/log/slurmctld.log" "$STATE/log/slurmd.log" >&2 || true
    die "the node did not become idle within 60 s"
fi
timeout 60 srun -p "$PARTITION" -N1 -n1 hostname >/dev/null \
    || die "srun hostname failed (see $STATE/log/slurmd.log)"
wait_idle 30 || die "the node is not idle 30 s after srun hostname (see $STATE/log/slurmd.log)"
say "up: slurmctld pid $(cat "$PIDS/slurmctld.pid"), slurmd pid $(cat "$PIDS/slurmd.pid"), partition $PARTITION"
sinfo
