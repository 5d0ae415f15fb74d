#!/usr/bin/env bash
# A real single-node Slurm cluster on this machine, on loopback only, for
# tests and for a person trying chakra-run under srun.
#
#   scripts/slurm/single-node.sh start [DIR]   # configure and start munged, slurmctld, slurmd
#   scripts/slurm/single-node.sh stop  [DIR]   # stop them
#   scripts/slurm/single-node.sh env   [DIR]   # print the export line for srun/sinfo
#
# DIR (default /tmp/chakra-slurm) holds the configuration, state and logs.
# CHAKRA_SLURM_PORT (default 16817) is slurmctld's port on 127.0.0.1; slurmd
# takes the next one.
# Needs root and Debian's slurm-wlm and munge (scripts/setup.sh installs
# them). Then: eval "$(scripts/slurm/single-node.sh env)"; srun -n 2 hostname
set -euo pipefail
cmd=${1:-}
dir=${2:-/tmp/chakra-slurm}
conf=$dir/slurm.conf
node=chakranode
port=${CHAKRA_SLURM_PORT:-16817}

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }

start() {
  [ "$(id -u)" -eq 0 ] || { echo "single-node.sh: needs root" >&2; exit 1; }
  for b in munged slurmctld slurmd srun; do
    command -v $b >/dev/null || { echo "single-node.sh: $b not found (apt-get install slurm-wlm munge)" >&2; exit 1; }
  done
  stop >/dev/null 2>&1 || true
  mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
  # munge: its own key and socket in DIR, run as the munge user.
  chown munge:munge "$dir/munge"; chmod 700 "$dir/munge"
  if [ ! -f "$dir/munge/munge.key" ]; then
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
    chown munge:munge "$dir/munge/munge.key"; chmod 400 "$dir/munge/munge.key"
  fi
  runuser -u munge -- munged --key-file="$dir/munge/munge.key" \
    --socket="$dir/munge/munge.socket" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munge.seed" --force
  cpus=$(nproc)
  cat > "$conf" <<CONF
ClusterName=chakra
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldPort=$port
SlurmdPort=$((port + 1))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
  export SLURM_CONF=$conf
  slurmctld -f "$conf"
  slurmd -f "$conf" -N $node
  # Ready when the node is idle.
  for _ in $(seq 1 60); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qE '^idle'; then
      echo "single-node.sh: up ($dir); eval \"\$($0 env $dir)\""
      return 0
    fi
    sleep 0.5
  done
  echo "single-node.sh: the node did not become idle; logs in $dir" >&2
  tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
  exit 1
}

stop() {
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  env) echo "export SLURM_CONF=$conf" ;;
  -h|--help|"") usage ;;
  *) usage >&2; exit 2 ;;
esac
