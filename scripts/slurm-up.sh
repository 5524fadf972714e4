#!/usr/bin/env bash
# Starts a single-node SLURM cluster on this machine, by hand (no systemd), for
# CI and for trying `clowder slurm` locally. Debian/Ubuntu, as root.
#
#   scripts/slurm-up.sh          # install if needed, configure, start, wait until the node is idle
#   scripts/slurm-up.sh --down   # stop slurmd, slurmctld and munged again
#
# Installs slurm-wlm and munge with apt-get when they are missing; writes
# /etc/slurm/slurm.conf and cgroup.conf (NodeName = `hostname -s`, the node's
# real CPUs and memory from `slurmd -C`, proctrack/cgroup, task/cgroup +
# task/affinity, cgroup v1 with core and memory confinement); starts munged,
# slurmctld and slurmd. Idempotent: exits 0 at once when the cluster answers.
# Exits non-zero (with the daemons' log tails) when it cannot bring it up.
set -euo pipefail

log() { echo "slurm-up: $*" >&2; }

if [[ "${1:-}" == "--down" ]]; then
    for d in slurmd slurmctld munged; do
        pkill -x "$d" 2>/dev/null && log "stopped $d" || true
    done
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    log "needs root (it installs packages and starts daemons)"
    exit 1
fi

if command -v sinfo >/dev/null && timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP' \
    && timeout 5 sinfo -h -o '%t' 2>/dev/null | grep -Eq '^(idle|mix|alloc)'; then
    log "already up"
    exit 0
fi

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    command -v apt-get >/dev/null || { log "slurm is not installed and apt-get is not available"; exit 1; }
    log "installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

node=$(hostname -s)

# munge: a key, its run directory, the daemon (as the munge user).
if [[ ! -s /etc/munge/munge.key ]]; then
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
if ! pgrep -x munged >/dev/null; then
    runuser -u munge -- /usr/sbin/munged
fi
for _ in $(seq 50); do munge -n </dev/null >/dev/null 2>&1 && break; sleep 0.1; done
munge -n </dev/null | unmunge >/dev/null || { log "munge does not work"; exit 1; }

# slurm: spool, logs, configuration.
mkdir -p /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/slurm /etc/slurm
chown slurm:slurm /var/spool/slurmctld /var/log/slurm /run/slurm
hw=$(slurmd -C | head -1 | sed 's/^NodeName=[^ ]* //')
# Leave 1 GiB of the node's memory to the system.
mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$hw")
hw=$(sed "s/RealMemory=[0-9]*/RealMemory=$((mem > 2048 ? mem - 1024 : mem))/" <<<"$hw")
cat >/etc/slurm/slurm.conf <<EOF
# Written by clowder's scripts/slurm-up.sh: a single-node cluster.
ClusterName=clowder
SlurmctldHost=$node
SlurmUser=slurm
AuthType=auth/munge
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup,task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=60
KillWait=30
NodeName=$node $hw State=UNKNOWN
PartitionName=main Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
cat >/etc/slurm/cgroup.conf <<EOF
CgroupPlugin=cgroup/v1
ConstrainCores=yes
ConstrainRAMSpace=yes
EOF

pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd

for _ in $(seq 100); do
    state=$(timeout 5 sinfo -h -n "$node" -o '%t' 2>/dev/null || true)
    case "$state" in
        idle | mix | alloc) log "up: node $node ($hw) is $state"; exit 0 ;;
        down* | drain* | inval*) scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true ;;
    esac
    sleep 0.2
done
log "the cluster did not come up (node state: ${state:-none})"
tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
exit 1
