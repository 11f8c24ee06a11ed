#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, for the cluster test
# (tests/integration/workflow/test_slurm.py) and for trying profiles/slurm by hand: Debian's slurm-wlm
# + munge, no accounting daemon (as many small clusters), proctrack/linuxproc and task/none (no
# cgroups, no systemd needed).
#
#   .ci/slurm-local.sh start DIR    install slurm-wlm and munge if missing (apt-get, root), start munged,
#                                   slurmctld and slurmd with every file under DIR, wait until the node is
#                                   idle and a job step runs; then `export SLURM_CONF=DIR/slurm.conf`
#   .ci/slurm-local.sh stop DIR     cancel the cluster's jobs and stop the three daemons (by their PIDs)
#
# Everything but one link is under DIR: the cluster has its own slurm.conf, munge key and socket and
# ports (SLURM_LOCAL_PORT, default 16817, and the next one; the next free pair is taken). The link is
# /etc/slurm/slurm.conf -> DIR/slurm.conf, made when no slurm.conf is there and removed by `stop`: the
# clients read SLURM_CONF, but the executor plugin's job steps (snakemake-executor-plugin-slurm-jobstep
# 0.6.1) drop every SLURM_* variable before their nested srun, which then finds only the default path.
# A slurm.conf of another cluster at that path is left alone (exit 3). Exit status 3: SLURM cannot be had here (not root, no apt-get, the install
# or a daemon failed); whatever was started is stopped again before that exit.
set -uo pipefail

UNAVAILABLE=3
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[[ $dir = /* ]] || dir="$PWD/$dir"
conf="$dir/slurm.conf"
sys_conf=/etc/slurm/slurm.conf

say() { echo "slurm-local: $*" >&2; }

stop() {
    if [ -f "$conf" ] && command -v squeue >/dev/null; then
        # running jobs first, so that no slurmstepd outlives its slurmd
        local ids
        ids=$(SLURM_CONF="$conf" timeout 10 squeue -h -o %i 2>/dev/null)
        if [ -n "$ids" ]; then
            SLURM_CONF="$conf" timeout 10 scancel $ids 2>/dev/null
            for _ in $(seq 20); do
                [ -z "$(SLURM_CONF="$conf" timeout 10 squeue -h -t running,completing -o %i 2>/dev/null)" ] && break
                sleep 1
            done
        fi
    fi
    local name pid
    for name in slurmd slurmctld munged; do
        [ -s "$dir/$name.pid" ] || continue
        pid=$(cat "$dir/$name.pid")
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
            kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
            say "stopped $name ($pid)"
        fi
        rm -f "$dir/$name.pid"
    done
    if [ -L "$sys_conf" ] && [ "$(readlink "$sys_conf")" = "$conf" ]; then rm -f "$sys_conf"; fi
}

unavailable() {
    say "$*"
    stop
    exit $UNAVAILABLE
}

port_free() {  # nothing listens on TCP port $1 (assumed free without ss)
    ! command -v ss >/dev/null || [ -z "$(ss -ltnH "sport = :$1" 2>/dev/null)" ]
}

start() {
    [ "$(id -u)" = 0 ] || unavailable "not root: cannot start slurmd"
    if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null \
        || ! command -v sbatch >/dev/null; then
        command -v apt-get >/dev/null || unavailable "slurm-wlm is not installed and there is no apt-get"
        say "installing slurm-wlm and munge"
        # the packages' scripts must not start the system's munged/slurmd: a policy-rc.d that denies it
        # for the install, when the machine has none (containers usually do)
        local policy=/usr/sbin/policy-rc.d own_policy=""
        if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own_policy=1; fi
        { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            slurm-wlm munge; } >"${TMPDIR:-/tmp}/slurm-local-apt.log" 2>&1
        local rc=$?
        [ -n "$own_policy" ] && rm -f "$policy"
        [ $rc = 0 ] || unavailable "apt-get install slurm-wlm munge failed (${TMPDIR:-/tmp}/slurm-local-apt.log)"
    fi
    mkdir -p "$dir/ctld" "$dir/slurmd" || unavailable "cannot create $dir"
    chmod 700 "$dir"
    local t0 host port node mem
    t0=$(date +%s)
    host=$(hostname -s)
    port=${SLURM_LOCAL_PORT:-16817}
    while ! { port_free "$port" && port_free $((port + 1)); }; do port=$((port + 2)); done

    # munge: a key and a socket of this cluster's own
    [ -s "$dir/munge.key" ] || { dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2>/dev/null \
        && chmod 400 "$dir/munge.key"; } || unavailable "cannot write a munge key"
    munged --force --socket="$dir/munge.socket" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
        --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" \
        || unavailable "munged did not start: $(tail -3 "$dir/munged.log" 2>/dev/null)"

    # the node as slurmd sees the hardware, with 80% of the memory for jobs
    node=$(slurmd -C 2>/dev/null | head -1 | sed -E 's/ RealMemory=[0-9]+//; s/^NodeName=[^ ]+ //')
    mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)
    cat >"$conf" <<CONF
ClusterName=smtlib-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/slurmd
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
# finished jobs stay visible to squeue for an hour: the executor plugin polls with squeue here (no
# accounting), and the test reads the states of its first jobs after the others' runs, which on a
# loaded machine took over the 5 minutes a shorter age gave them (a KeyError on the first job's id)
MinJobAge=3600
# a job over its time limit is killed within seconds
KillWait=5
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
NodeName=$host NodeAddr=127.0.0.1 $node RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
    if [ -L "$sys_conf" ] && { [ "$(readlink "$sys_conf")" = "$conf" ] || [ ! -e "$sys_conf" ]; }; then
        ln -sfn "$conf" "$sys_conf"  # ours, or left dangling by a cluster that was not stopped
    elif [ -e "$sys_conf" ]; then
        unavailable "$sys_conf belongs to another cluster (the plugin's job steps read only that path)"
    else
        mkdir -p "$(dirname "$sys_conf")" && ln -s "$conf" "$sys_conf" || unavailable "cannot link $sys_conf"
    fi
    export SLURM_CONF="$conf"
    slurmctld -f "$conf" || unavailable "slurmctld did not start: $(tail -3 "$dir/slurmctld.log" 2>/dev/null)"
    slurmd -f "$conf" -N "$host" || unavailable "slurmd did not start: $(tail -3 "$dir/slurmd.log" 2>/dev/null)"
    local state=""
    for _ in $(seq 60); do
        state=$(timeout 10 sinfo -h -o %t 2>/dev/null)
        [ "$state" = idle ] && break
        sleep 0.5
    done
    [ "$state" = idle ] || unavailable "the node is not idle after 30 s (state '$state'): $(tail -3 "$dir/slurmctld.log")"
    timeout 60 srun -t 1 -N 1 true >/dev/null 2>"$dir/probe.err" \
        || unavailable "a job step does not run: $(tail -3 "$dir/probe.err")"
    say "up in $(($(date +%s) - t0)) s at $(date -u +%FT%TZ): munged $(cat "$dir/munged.pid")," \
        "slurmctld $(cat "$dir/slurmctld.pid"), slurmd $(cat "$dir/slurmd.pid"); ports $port-$((port + 1))"
    echo "export SLURM_CONF=$conf"
}

case $cmd in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
