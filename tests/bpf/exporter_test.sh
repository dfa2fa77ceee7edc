#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# exporter_test.sh - `mltcpctl exporter` scraped by a real Prometheus
# (make check-ops-exporter).
#
# Loads MLTCP, starts the exporter and Debian's prometheus (loopback, a
# temporary config and data directory, 1 s scrapes), runs MLTCP iteration
# traffic on loopback (mltcp_traffic.py), and checks through Prometheus's
# HTTP API that the live-flow count and the iteration counters it scraped
# equal `mltcpctl stats --json` taken at the same moment; `promtool check
# metrics` accepts the exposition.  Bad input: bad --listen/--max-flows, a
# port in use; scrapes while MLTCP is loaded and unloaded in a loop.  Root;
# holds /run/lock/mltcp-host.lock; its EXIT trap stops what it started and
# unloads.  ~25 s.
#
#   MLTCPCTL=path tests/bpf/exporter_test.sh
set -uo pipefail

NAME=exporter_test
. "$(dirname "$0")/ops_lib.sh"
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
	die "prometheus/promtool missing: install the Debian package 'prometheus' (make deps)"
ops_test_start
WORK=$(mktemp -d /tmp/mltcp-exporter-XXXXXX)
BG_PIDS=()

expect_rc() { # RC PATTERN "description" command...
	local want=$1 pat=$2 what=$3; shift 3
	"$@" >"$WORK/rc.out" 2>&1
	local rc=$?
	if [[ $rc == "$want" ]] && grep -q -- "$pat" "$WORK/rc.out"; then
		ok "$what -> exit $rc: $(head -n 1 "$WORK/rc.out")"
	else
		bad "$what: exit $rc (wanted $want, message with '$pat'):"; sed 's/^/       | /' "$WORK/rc.out"
	fi
}
cleanup() {
	local p
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[[ -e /sys/fs/bpf/mltcp ]] && "$CTL" unload >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[[ -e /sys/fs/bpf/mltcp ]] && { echo "exporter_test: unloading a leftover load"; "$CTL" unload >/dev/null 2>&1; }

free_port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
EXP_PORT=$(free_port) PROM_PORT=$(free_port)
[[ $EXP_PORT != "$PROM_PORT" ]] || PROM_PORT=$((EXP_PORT + 1))
METRICS=http://127.0.0.1:$EXP_PORT/metrics
PROM=http://127.0.0.1:$PROM_PORT
wait_http() { for _ in $(seq 200); do curl -sf -o /dev/null "$1" && return 0; sleep 0.05; done; return 1; }

echo "== bad input"
expect_rc 2 "port must be" "exporter --listen 127.0.0.1:99999" "$CTL" exporter --listen 127.0.0.1:99999
expect_rc 2 "not an IPv4" "exporter --listen nohost:9465" "$CTL" exporter --listen nohost:9465
expect_rc 2 "max-flows" "exporter --max-flows -1" "$CTL" exporter --max-flows -1

echo "== exporter and Prometheus"
"$CTL" exporter --listen 127.0.0.1:$EXP_PORT >"$WORK/exporter.log" 2>&1 &
EXP_PID=$!; BG_PIDS+=($EXP_PID)
wait_http "$METRICS" || die "exporter did not come up: $(cat "$WORK/exporter.log")"
expect_rc 1 "Address already in use" "a second exporter on the same port" \
	timeout 5 "$CTL" exporter --listen 127.0.0.1:$EXP_PORT
if curl -sf "$METRICS" | grep -qx "mltcp_loaded 0"; then ok "before load: mltcp_loaded 0"; else bad "before load: no 'mltcp_loaded 0'"; fi

"$CTL" load --param idle_min_us=20000 >/dev/null || die "load failed"
ALERTS=$ROOT/tools/mltcpctl/prometheus/mltcp-alerts.yml
if promtool check rules "$ALERTS" >"$WORK/rules.out" 2>&1; then
	ok "promtool check rules: $(grep -o 'SUCCESS.*' "$WORK/rules.out")"
else
	bad "promtool check rules $ALERTS:"; sed 's/^/       | /' "$WORK/rules.out"
fi
cat >"$WORK/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: ['$ALERTS']
scrape_configs:
  - job_name: mltcp
    static_configs:
      - targets: ['127.0.0.1:$EXP_PORT']
EOC
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/data" \
	--web.listen-address=127.0.0.1:$PROM_PORT --log.level=warn >"$WORK/prometheus.log" 2>&1 &
BG_PIDS+=($!)
wait_http "$PROM/-/ready" || die "prometheus did not become ready: $(tail -n 5 "$WORK/prometheus.log")"
# Prometheus hands discovered targets to its scrapers after ~5 s.
for _ in $(seq 150); do
	curl -sf "$PROM/api/v1/query?query=up" | grep -q '"job":"mltcp"' && break
	sleep 0.1
done
if curl -sf "$PROM/api/v1/query?query=mltcp_loaded" | grep -q '"value":\[[0-9.]*,"1"\]'; then
	ok "prometheus on 127.0.0.1:$PROM_PORT scrapes the exporter every 1 s: mltcp_loaded 1"
else
	die "prometheus does not scrape the exporter: $(curl -s "$PROM/api/v1/targets")"
fi

# Three MLTCP flows (two mltcp, one mltcp_cubic): K iterations each, then
# idle but open while the numbers are compared.
K=5 N=400000 HOLD=8 CLIENTS=()
for i in 0 1 2; do
	cc=mltcp; ((i == 2)) && cc=mltcp_cubic
	port=$(free_port)
	$PY "$TRAFFIC" server --bind 127.0.0.1 --port "$port" --out "$WORK/srv$i.json" --ready "$WORK/srv$i.ready" &
	BG_PIDS+=($!)
	for _ in $(seq 100); do [[ -e $WORK/srv$i.ready ]] && break; sleep 0.02; done
	$PY "$TRAFFIC" client --host 127.0.0.1 --port "$port" --cc $cc --iterations $K --bytes $N \
		--gap-ms 60 --hold $HOLD >"$WORK/cli$i.json" &
	BG_PIDS+=($!) CLIENTS+=($!)
done

# Wait until every flow has finished its iterations (counters stop moving).
prev="" stable=0
for _ in $(seq 100); do
	cur=$("$CTL" stats --json | $PY -c 'import json,sys; f=json.load(sys.stdin)["flows"]; print(len(f), sorted(x["iterations"] for x in f))')
	if [[ $cur == "$prev" && $cur == 3\ * ]]; then stable=$((stable + 1)); else stable=0; fi
	((stable >= 3)) && break
	prev=$cur; sleep 0.2
done
t_stable=$(date +%s.%N)
sleep 2.5	# at least two scrapes after the flows went quiet
"$CTL" stats --json >"$WORK/stats.json"
curl -sf "$METRICS" >"$WORK/metrics.txt"
if promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1; then
	ok "promtool check metrics accepts /metrics ($(grep -vc '^#' "$WORK/metrics.txt") samples)"
else
	bad "promtool check metrics:"; sed 's/^/       | /' "$WORK/promtool.out"
fi
$PY - "$PROM" "$WORK/stats.json" "$t_stable" >"$WORK/compare.out" 2>&1 <<'EOP'
import json, sys, urllib.parse, urllib.request
prom, stats_file, t_stable = sys.argv[1], sys.argv[2], float(sys.argv[3])
flows = json.load(open(stats_file))["flows"]

def query(q):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    r = json.load(urllib.request.urlopen(url, timeout=5))
    assert r["status"] == "success", r
    return r["data"]["result"]

def scalar(q):
    res = query(q)
    assert len(res) == 1, "%s: %d series" % (q, len(res))
    ts, v = res[0]["value"]
    return float(v), float(ts)

errors = []
n, _ = scalar("mltcp_flows")
ts_flows, _ = scalar("timestamp(mltcp_flows)")
print("query mltcp_flows -> %g (sample at %.3f, flows quiet since %.3f); stats --json: %d flows"
      % (n, ts_flows, t_stable, len(flows)))
if ts_flows < t_stable:
    errors.append("Prometheus's newest mltcp_flows sample predates the quiet phase")
if n != len(flows) or n != 3:
    errors.append("mltcp_flows %g != %d flows in stats --json (want 3)" % (n, len(flows)))
want_total = sum(f["iterations"] for f in flows)
total, _ = scalar("mltcp_iterations_total")
print("query mltcp_iterations_total -> %g; sum of stats --json iterations: %d" % (total, want_total))
if total != want_total or total == 0:
    errors.append("mltcp_iterations_total %g != %d" % (total, want_total))
per_flow = {r["metric"]["local"]: (float(r["value"][1]), r["metric"]["variant"])
            for r in query("mltcp_flow_iterations_total")}
for f in flows:
    got = per_flow.get(f["local"])
    print("query mltcp_flow_iterations_total{local=%r} -> %s; stats --json: %d (%s)"
          % (f["local"], got, f["iterations"], f["cc"]))
    if got is None or got[0] != f["iterations"] or got[1] != f["cc"]:
        errors.append("flow %s: Prometheus %s, stats --json %d %s" % (f["local"], got, f["iterations"], f["cc"]))
peak, _ = scalar("max_over_time(mltcp_flows[1m])")
rep, _ = scalar("mltcp_window_repairs_total")
print("query max_over_time(mltcp_flows[1m]) -> %g; mltcp_window_repairs_total -> %g" % (peak, rep))
up, _ = scalar('up{job="mltcp"}')
if up != 1:
    errors.append("up{job=mltcp} is %g" % up)
r = json.load(urllib.request.urlopen(prom + "/api/v1/rules", timeout=5))
rules = [x for g in r["data"]["groups"] for x in g["rules"]]
print("alert rules loaded: %s" % ", ".join("%s (%s, %s)" % (x["name"], x["health"], x["state"])
                                           for x in rules))
if len(rules) < 4 or any(x["health"] != "ok" or x["state"] != "inactive" for x in rules):
    errors.append("alert rules not all healthy and inactive on a healthy host")
for e in errors:
    print("ERROR " + e)
sys.exit(1 if errors else 0)
EOP
if [[ $? == 0 ]]; then
	ok "Prometheus's flows and iteration counters equal 'mltcpctl stats --json'"
	sed 's/^/       : /' "$WORK/compare.out"
else
	bad "Prometheus vs stats --json:"; sed 's/^/       | /' "$WORK/compare.out"
fi
wait "${CLIENTS[@]}"	# the flows close

echo "== scrapes while MLTCP is loaded and unloaded"
(for _ in $(seq 8); do "$CTL" unload >/dev/null 2>&1; "$CTL" load >/dev/null 2>&1; done; touch "$WORK/cycled") &
BG_PIDS+=($!)
scrapes=0 badscrapes=0
while [[ ! -e $WORK/cycled ]]; do
	if curl -sf -m 5 "$METRICS" >"$WORK/m.txt" && promtool check metrics <"$WORK/m.txt" >/dev/null 2>&1 &&
		grep -Eqx "mltcp_loaded [01]" "$WORK/m.txt"; then
		scrapes=$((scrapes + 1))
	else
		badscrapes=$((badscrapes + 1)); cp "$WORK/m.txt" "$WORK/bad.txt" 2>/dev/null
	fi
done
if ((badscrapes == 0 && scrapes > 0)) && kill -0 $EXP_PID 2>/dev/null; then
	ok "$scrapes scrapes during 8 unload/load cycles: all valid, exporter alive"
else
	bad "$badscrapes of $((scrapes + badscrapes)) scrapes bad during load/unload (exporter alive: $(kill -0 $EXP_PID 2>/dev/null && echo yes || echo no))"
	[[ -e $WORK/bad.txt ]] && head -n 20 "$WORK/bad.txt" | sed 's/^/       | /'
fi
kill $EXP_PID; wait $EXP_PID 2>/dev/null
rc=$?
if [[ $rc == 0 ]]; then ok "exporter exits 0 on SIGTERM"; else bad "exporter exit $rc on SIGTERM"; fi

finish
