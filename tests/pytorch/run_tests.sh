#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run_tests.sh - functional tests of the PyTorch integration (make check-pytorch):
# a tiny 2-rank DDP job through examples/pytorch/launch.py with MLTCP and
# job-level hints (the hints must reach Gloo's connections), a second
# launcher while it runs (refused), a failing and a hanging rank (the
# launcher stops the run, shows that rank's lines, exits 1, leaves nothing),
# PyTorch missing, bad hint sizes and a refused hint in C, Python and
# mltcp_torch, and bench.py's whole path in one tiny repetition.  The
# launcher takes the host lock itself.  About 60 s; root.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
export MLTCPCTL=${MLTCPCTL:-$BUILD/cmake/tools/mltcpctl/mltcpctl}
export MLTCP_LIBRARY=${MLTCP_LIBRARY:-$BUILD/cmake/bpf/libmltcp.so.0}
PY=/usr/bin/python3
LAUNCH="$ROOT/examples/pytorch/launch.py"
TRAIN="$ROOT/examples/pytorch/ddp_train.py"
export PYTHONPATH=$ROOT/bpf/python
WORK=$(mktemp -d /tmp/mltcp-pytorch-test-XXXXXX)
TINY=(--iterations 8 --compute-ms 100 --hidden 200)
FAILS=0 PASSES=0

die() { echo "run_tests: $*" >&2; exit 1; }
((EUID == 0)) || die "needs root (namespaces, cgroups, BPF)"
[[ -x $MLTCPCTL ]] || die "mltcpctl not built at $MLTCPCTL (make cmake-build)"
$PY -c "import torch" 2>/dev/null || die "python3-torch missing: make deps (mk/pytorch.mk)"

ok() { PASSES=$((PASSES + 1)); echo "  ok   $*"; }
bad() { FAILS=$((FAILS + 1)); echo "  FAIL $*"; }
# expect RC "description" GREP command...: exit code RC and output matching GREP
expect() {
	local want=$1 what=$2 pat=$3; shift 3
	"$@" >"$WORK/out" 2>&1
	local rc=$?
	if [[ $rc == "$want" ]] && grep -qE -- "$pat" "$WORK/out"; then
		ok "$what -> exit $rc: $(grep -E -m1 -- "$pat" "$WORK/out" | cut -c1-150)"
	else
		bad "$what: exit $rc (wanted $want, output matching '$pat')"
		sed 's/^/       | /' "$WORK/out" | tail -n 12
	fi
}
check() { local what=$1; shift; if "$@" >"$WORK/chk" 2>&1; then ok "$what"; else
	bad "$what"; sed 's/^/       | /' "$WORK/chk" | tail -n 8; fi; }
nothing_left() {
	! ip netns list | grep -q '^mltcp-tb-' &&
	! ls -d /sys/fs/cgroup/unified/mltcp-pt-* /sys/fs/cgroup/mltcp-pt-* 2>/dev/null | grep -q . &&
	[[ "$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control)" == "$ALLOWED" ]] &&
	# MLTCP is host-wide and others may load it: only what the launcher loaded
	# must be gone (its log says so).
	{ ! grep -q "^mltcp: loaded" "$WORK/$1" || grep -q "^mltcp: unloaded" "$WORK/$1"; }
}
BG=()
trap 'for p in "${BG[@]}"; do kill "$p" 2>/dev/null; done; wait; rm -rf "$WORK"' EXIT
ALLOWED=$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control)
START=$(date +%s)

echo "== bad input without a job"
expect 3 "ddp_train.py without PyTorch (python3 -S)" "python3-torch" $PY -S "$TRAIN" --rank 0 \
	--world-size 1 --master-addr 127.0.0.1 --master-port 1
expect 2 "launch.py --jobs 0" "--jobs must be" $PY "$LAUNCH" --cc mltcp --jobs 0
expect 2 "launch.py --hint with reno" "--hint needs" $PY "$LAUNCH" --cc reno --hint
expect 1 "launch.py --pin-cpus with more jobs than CPUs" "--pin-cpus: .* need at least" \
	$PY "$LAUNCH" --cc reno --pin-cpus --jobs $(($(nproc) + 1))
$PY - "$WORK/sizes" <<'EOF' > "$WORK/sizes.out" 2>&1
# Bad sizes and seeds in C (libmltcp directly), Python and mltcp_torch; a
# refused hint and seed (this process's cgroup has no MLTCP attachment).
import ctypes, errno, os, sys
import torch, torch.distributed as dist
import mltcp, mltcp_torch
lib = ctypes.CDLL(os.environ["MLTCP_LIBRARY"], use_errno=True)
lib.mltcp_hint_job.argtypes = [ctypes.c_uint64]
lib.mltcp_last_error.restype = ctypes.c_char_p
fails = 0
def expect(what, fn, exc, want_errno=None):
    global fails
    try:
        fn()
    except exc as e:
        if want_errno is None or e.errno == want_errno:
            print("ok   %s: %s: %s" % (what, type(e).__name__, e))
            return
    except Exception as e:
        print("FAIL %s: %s %s" % (what, type(e).__name__, e)); fails += 1; return
    print("FAIL %s: accepted" % what); fails += 1
for n in (0, 2**48 + 1, 2**64 - 1):
    rc = lib.mltcp_hint_job(n)
    err = ctypes.get_errno()
    good = rc == -1 and err == errno.EINVAL
    print("%s C mltcp_hint_job(%d): rc %d errno %s: %s" % ("ok  " if good else "FAIL", n, rc,
          errno.errorcode.get(err), lib.mltcp_last_error().decode()))
    fails += not good
for n in (0, -5, 2**64, 2**48 + 1, 1.5, "7"):
    expect("Python hint_job(%r)" % (n,), lambda: mltcp.hint_job(n), ValueError)
    expect("Python hint(sock, %r)" % (n,), lambda: mltcp.hint(0, n), ValueError)
for s in (-1, 2**64, 1.5, "7", True):
    expect("Python seed_job(%r)" % (s,), lambda: mltcp.seed_job(s), ValueError)
expect("Python seed_job(1) outside an attached cgroup (refused)",
       lambda: mltcp.seed_job(1), mltcp.MltcpError, errno.ENOPROTOOPT)
dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4))
for n in (0, -5, 2**64):
    expect("mltcp_torch.announce_iterations(nbytes=%r)" % n,
           lambda: mltcp_torch.announce_iterations(model, nbytes=n), ValueError)
expect("mltcp_torch.announce_iterations outside an attached cgroup (refused)",
       lambda: mltcp_torch.announce_iterations(model), mltcp.MltcpError, errno.ENOPROTOOPT)
sys.exit(1 if fails else 0)
EOF
rc=$?
grep -c '^ok' "$WORK/sizes.out" | xargs -I{} echo "  ... {} bad-size/refusal checks:"
sed 's/^/       /' "$WORK/sizes.out" | cut -c1-160
((rc == 0)) && ok "bad hint sizes rejected, unattached hint refused (C, Python, mltcp_torch)" ||
	bad "bad hint sizes / refused hint"

echo "== a tiny 2-rank DDP job through the launcher: mltcp, job-level hints"
$PY "$LAUNCH" --cc mltcp --jobs 1 --hint --timeout 120 --out "$WORK/run" -- "${TINY[@]}" \
	> "$WORK/run.out" 2>&1 &
LPID=$!; BG+=($LPID)
for _ in $(seq 600); do
	[[ -s /run/lock/mltcp-pytorch.lock && "$(cat /run/lock/mltcp-pytorch.lock)" == "$LPID" ]] && break
	sleep 0.05
done
expect 4 "a second launcher while the first runs" "refused: another PyTorch launcher \\(pid $LPID\\)" \
	$PY "$LAUNCH" --cc reno --jobs 1 --out "$WORK/second" -- "${TINY[@]}"
wait $LPID; rc=$?
if ((rc == 0)); then ok "launcher: job finished"; else bad "launcher exit $rc"; tail -n 15 "$WORK/run.out"; fi
check "rank 0 wrote 8 ordered workload rows, each with its window repairs" $PY - "$WORK/run/job1-rank0.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [int(r["iteration"]) for r in rows] == list(range(8)), rows
for r in rows:
    t = [int(r[k]) for k in ("start_us", "comm_start_us", "comm_end_us", "end_us")]
    assert t == sorted(t) and int(r["bytes"]) > 0, r
    assert r["window_repairs"].isdigit(), "window repairs of the rank's MLTCP sockets: %s" % r
print(rows[-1])
EOF
check "the hints reached Gloo's data connections (mltcp, hinted >= 3)" $PY - "$WORK/run/mltcp-stats.jsonl" <<'EOF'
import json, sys
flows = [f for line in open(sys.argv[1]) for f in json.loads(line)["flows"]]
best = max(flows, key=lambda f: f["hinted"])
print(best)
assert best["cc"] == "mltcp" and best["hinted"] >= 3 and "10.199.0." in best["local"], best
EOF
check "  ... and torn down: no namespaces, cgroups, allowed-cc change, MLTCP unloaded if loaded" \
	nothing_left run.out

echo "== a failing rank, a hanging rank"
expect 1 "rank 1 fails at iteration 3" "rank job1-rank1 failed" \
	$PY "$LAUNCH" --cc reno --jobs 1 --timeout 120 --out "$WORK/fail" -- "${TINY[@]}" --fail-at 3
check "  ... its last lines are shown" grep -q "failing at iteration 3" "$WORK/out"
check "  ... and torn down" nothing_left out
expect 1 "rank 1 hangs at iteration 2 (--timeout 25)" "timed out after 25 s" \
	$PY "$LAUNCH" --cc mltcp_cubic --jobs 1 --timeout 25 --out "$WORK/hang" -- "${TINY[@]}" --hang-at 2
check "  ... the hanging rank's last lines are shown" grep -q "hanging at iteration 2" "$WORK/out"
check "  ... and torn down" nothing_left out

echo "== make bench-pytorch's whole path, tiny: one repetition of two_identical, reno and mltcp"
expect 0 "bench.py ends in its table and TARGET lines" "^TARGET +two_identical mltcp" \
	env MLTCP_METRICS="$BUILD/cmake/workload/mltcp-metrics" $PY "$ROOT/examples/pytorch/bench.py" \
	--out "$WORK/bench" --reps 1 --iterations 7 --iso-iterations 5 --iso-reps 2 --warmup 2 \
	--mixes two_identical --ccs "reno mltcp" --compute-ms 100 --hidden 200 --no-plots \
	--pin-cpus --mltcpctl "$MLTCPCTL"
check "  ... a RESULT line per run with ratios, the loss counters of both ranks and the window repairs (per phase too)" \
	grep -qE "^RESULT framework=pytorch mix=two_identical cc=mltcp mean_ratio=[0-9.]+ .* rto=[0-9]+ rto_iterations=[^ ]+ rto_unrepaired=[0-9]+ rto_unrepaired_per_100_iter=[0-9.]+( p99_ratio_unrepaired=[0-9.]+)? window_repairs=[0-9]+( |$)" \
	"$WORK/out"
check "  ... and each job alone twice, its baseline their median" \
	grep -qE "^RESULT framework=pytorch mix=alone cc=mltcp mean_ms=[0-9.]+ comm_fraction=[0-9.]+ runs_ms=[0-9.]+,[0-9.]+ vs_reno_alone=" \
	"$WORK/out"
check "  ... each job on CPUs of its own (--pin-cpus)" $PY - "$WORK/bench/runs" <<'EOF'
import glob, os, re, sys
cpus = {}
for log in glob.glob(os.path.join(sys.argv[1], "two_identical-*", "job*-rank*.log")):
    m = re.search(r"CPUs ([0-9,]+)", open(log).read())
    assert m, "no CPU list in " + log
    cpus.setdefault(os.path.basename(log).split("-")[0], set()).add(m.group(1))
print(cpus)
assert set(cpus) == {"job1", "job2"} and all(len(v) == 1 for v in cpus.values()), cpus
a, b = (set(v.pop().split(",")) for v in cpus.values())
assert a and b and not a & b, (a, b)
EOF
check "  ... and torn down" nothing_left out

echo "pytorch tests: $PASSES passed, $FAILS failed in $(($(date +%s) - START)) s"
((FAILS == 0))
