#!/usr/bin/env bash
# Stop the single-node SLURM that .ci/slurm-up.sh started: cancel its jobs, then stop slurmd,
# slurmctld and (when slurm-up.sh started it) munged, each by the pid recorded under
# $JUDGELAB_SLURM_DIR/pids; remove the /etc/slurm/slurm.conf symlink it made. Nothing else is
# touched: a daemon whose pid file is missing, or whose pid now runs another program, is left.
# `--quiet`: print nothing when there is nothing to stop.
set -uo pipefail

STATE=${JUDGELAB_SLURM_DIR:-/tmp/judgelab-slurm}
CONF=$STATE/slurm.conf
ETC_CONF=/etc/slurm/slurm.conf
PIDS=$STATE/pids
QUIET=${1:-}

say() { [ "$QUIET" = --quiet ] || echo "slurm-down: $*"; }

runs() {  # runs PID NAME: PID is a live process whose name starts with NAME
    [ -n "$1" ] && [[ "$(cat "/proc/$1/comm" 2>/dev/null)" == "$2"* ]]
}

alive() {  # alive PIDFILE NAME: the pid in PIDFILE runs a process whose name starts with NAME
    runs "$(cat "$1" 2>/dev/null)" "$2"
}

stop() {  # stop NAME: TERM the pid of $PIDS/NAME.pid, wait up to 20 s, then KILL
    local file=$PIDS/$1.pid pid
    pid=$(cat "$file" 2>/dev/null)
    if ! runs "$pid" "$1"; then
        rm -f "$file"
        return 0
    fi
    kill -TERM "$pid"
    for _ in $(seq 40); do runs "$pid" "$1" || break; sleep 0.5; done
    if runs "$pid" "$1"; then
        say "$1 (pid $pid) ignored TERM; killing it"
        kill -KILL "$pid"
    fi
    rm -f "$file"
    say "stopped $1 (pid $pid)"
}

if alive "$PIDS/slurmctld.pid" slurmctld && [ -f "$CONF" ]; then
    # our own cluster's jobs (a test that was interrupted may leave some)
    jobs=$(SLURM_CONF=$CONF squeue -h -o '%i' 2>/dev/null)
    if [ -n "$jobs" ]; then
        say "cancelling jobs: $(echo "$jobs" | tr '\n' ' ')"
        # shellcheck disable=SC2086
        SLURM_CONF=$CONF scancel $jobs
        sleep 2
    fi
fi
stop slurmd
stop slurmctld
stop munged
if [ -L "$ETC_CONF" ] && [ "$(readlink "$ETC_CONF")" = "$CONF" ]; then
    rm -f "$ETC_CONF"
    say "removed the symlink $ETC_CONF"
fi
exit 0
