#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#
# Several "hosts" on this machine: network namespaces joined by veth pairs
# to a bridge, each with its own address, for multi-host MPI runs over TCP
# (docs/runtime.md, "Several hosts"). Needs root and iproute2's `ip netns`.
#
#   netns-hosts.sh up N [PREFIX]   create PREFIXsw (the switch: a bridge) and
#                                  hosts PREFIX0 .. PREFIX<N-1>; host i is
#                                  10.213.0.<i+1>/24 on its interface `eth0`
#   netns-hosts.sh down [PREFIX]   kill what runs in them, delete them
#   netns-hosts.sh exec HOST CMD   run CMD in host HOST (a namespace name),
#                                  with its own hostname HOST (a UTS
#                                  namespace) and the MCA settings below
#   netns-hosts.sh agent [OPTS] HOST CMD...
#                                  OpenMPI's launch agent (plm_rsh_agent):
#                                  runs CMD, a command line as ssh would run
#                                  it, in host HOST
#   netns-hosts.sh with N PREFIX -- CMD...
#                                  up, run CMD (here, not in a host), down
#                                  whatever CMD did (also on INT/TERM);
#                                  exits with CMD's status
#   netns-hosts.sh check           exit 0 when namespaces can be made here,
#                                  else print why and exit 1
#
# PREFIX defaults to "dth" (hosts dth0, dth1, ...). Nothing is created outside the namespaces: the
# bridge lives in PREFIXsw, the veth pairs are created in their namespaces,
# and no address is given to the machine's own interfaces. `up` removes
# what it made when a step fails; `down` is idempotent.
#
# `exec` sets OMPI_MCA_* so that mpirun started in a host launches its
# daemons with `agent`, and every rank talks over TCP on 10.213.0.0/24 only
# (btl tcp,self: no shared memory, even between ranks of one host; pml ob1:
# no UCX), and ranks yield the CPU while they wait.
set -Eeuo pipefail

SUBNET=10.213.0
SELF=$(readlink -f "${BASH_SOURCE[0]}")

die() {
  echo "netns-hosts.sh: $*" >&2
  exit 1
}

check() {
  [ "$(id -u)" = 0 ] || { echo "not root: cannot create network namespaces"; return 1; }
  command -v ip >/dev/null || { echo "no ip (iproute2)"; return 1; }
  command -v unshare >/dev/null || { echo "no unshare (util-linux)"; return 1; }
  local probe="dtprobe$$"
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "ip netns add fails here (no CAP_SYS_ADMIN or no netns support)"
    return 1
  fi
  ip netns del "$probe"
  if ! unshare --uts true 2>/dev/null; then
    echo "unshare --uts fails here"
    return 1
  fi
}

# Kills every process in namespace $1 (by pid, SIGKILL), then deletes it.
# Bounded: 50 tries of 0.1 s.
remove_ns() {
  local ns=$1 tries
  ip netns list | awk '{print $1}' | grep -qx "$ns" || return 0
  for tries in $(seq 50); do
    local pids
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -z "$pids" ] && break
    # shellcheck disable=SC2086
    kill -9 $pids 2>/dev/null || true
    sleep 0.1
  done
  ip netns del "$ns" 2>/dev/null || true
}

down() {
  local prefix=${1:-dth} ns
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^${prefix}(sw|[0-9]+)$" || true); do
    remove_ns "$ns"
  done
}

up() {
  local n=${1:-} prefix=${2:-dth} i
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 200 ] ||
    die "up: N must be 1 to 200, not '$n'"
  [[ "$prefix" =~ ^[a-z][a-z0-9]{0,7}$ ]] || die "up: bad PREFIX '$prefix'"
  down "$prefix"
  # Anything failing below takes down what was made.
  trap 'down "$prefix"; echo "netns-hosts.sh: up failed; removed what it made" >&2' ERR
  local sw="${prefix}sw"
  ip netns add "$sw"
  ip -n "$sw" link set lo up
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" link set br0 up
  for i in $(seq 0 $((n - 1))); do
    local host="${prefix}$i"
    ip netns add "$host"
    ip -n "$host" link set lo up
    # The pair is created inside the host, its other end moved to the switch.
    ip -n "$host" link add eth0 type veth peer name "p$i" netns "$sw"
    ip -n "$host" addr add "$SUBNET.$((i + 1))/24" dev eth0
    ip -n "$host" link set eth0 up
    ip -n "$sw" link set "p$i" master br0
    ip -n "$sw" link set "p$i" up
  done
  trap - ERR
  echo "netns-hosts.sh: $n hosts up: ${prefix}0..${prefix}$((n - 1)) on $SUBNET.0/24"
}

mca_env() {
  export OMPI_MCA_plm_rsh_agent="$SELF agent"
  export OMPI_MCA_btl=tcp,self
  export OMPI_MCA_pml=ob1
  export OMPI_MCA_btl_tcp_if_include="$SUBNET.0/24"
  export OMPI_MCA_oob_tcp_if_include="$SUBNET.0/24"
  # The hosts share this machine's cores: a host whose slots are not
  # oversubscribed would busy-poll, and 4 polling ranks on 2 cores take
  # turns of a scheduler tick (83 ms steps instead of 0.4 ms).
  export OMPI_MCA_mpi_yield_when_idle=1
}

run_in() {
  local host=$1
  shift
  ip netns list | awk '{print $1}' | grep -qx "$host" ||
    die "no host '$host' (netns-hosts.sh up first)"
  mca_env
  # A hostname of its own: OpenMPI tells nodes apart by name.
  exec ip netns exec "$host" unshare --uts -- \
    sh -c 'hostname "$0" && exec "$@"' "$host" "$@"
}

agent() {
  # ssh-style options mpirun might pass (-x, -o X) come before the host.
  while [ $# -gt 0 ]; do
    case $1 in
      -o | -l | -p) shift 2 ;;
      -*) shift ;;
      *) break ;;
    esac
  done
  [ $# -ge 2 ] || die "agent: usage: agent HOST COMMAND..."
  local host=$1
  shift
  # Like ssh: the words are one command line for a shell.
  run_in "$host" sh -c "$*"
}

with() {
  [ $# -ge 4 ] && [ "$3" = -- ] || die "with: usage: with N PREFIX -- CMD..."
  local n=$1 prefix=$2 status=0
  shift 3
  trap 'down "$prefix"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  up "$n" "$prefix" >/dev/null
  "$@" || status=$?
  exit "$status"
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) shift; down "$@" ;;
  exec) shift; [ $# -ge 2 ] || die "exec: usage: exec HOST CMD..."; run_in "$@" ;;
  agent) shift; agent "$@" ;;
  with) shift; with "$@" ;;
  check) check ;;
  *) sed -n '4,35p' "$SELF" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
