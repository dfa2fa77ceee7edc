// cli.cpp - mltcp-emu's command line: --help, the options of every command
// (commands.h) and the dispatch to send, recv, ring and profiles.
//
// mltcp-emu emulates the network behaviour of data-parallel training jobs
// over real TCP sockets, for the interleaving testbed.  A job repeats
// { compute (silence); communication phase: send the iteration's bytes,
// optionally in buckets with gaps, over one or more connections; wait for
// the receiver's confirmation that every byte arrived (as an all-reduce
// completes) }.  Per-iteration times go to a CSV, a summary to JSON.  The
// receiver (same binary) confirms iterations and logs the bytes it receives
// per job in time bins (throughput timelines, bulk-flow share).
#include <getopt.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "commands.h"
#include "emu_util.h"
#include "profile.h"
#include "ring.h"

using namespace mltcp_emu;

namespace {

void usage(FILE *f)
{
	fprintf(f,
		"usage: mltcp-emu send --dst IP:PORT --profile-file FILE --profile NAME [options]\n"
		"       mltcp-emu recv [--port P] [--port-file F] [--log-dir D] [options]\n"
		"       mltcp-emu ring --rank I --peers IP:PORT,IP:PORT,... --profile-file FILE\n"
		"                      --profile NAME [options]\n"
		"       mltcp-emu profiles --profile-file FILE   (validate and list)\n"
		"\n"
		"send: one training job. Per iteration: compute (sleep compute_us), send the\n"
		"iteration's bytes (in buckets, over conns connections), wait until the receiver\n"
		"confirms every byte. Profile fields: profiles/README.md.\n"
		"  --job NAME            job name in outputs (default: profile name)\n"
		"  --cc NAME             TCP_CONGESTION for the job's sockets (default: system)\n"
		"  --iterations N        iterations to run (default 20)\n"
		"  --start-at-us T       start at this CLOCK_REALTIME time (us since epoch)\n"
		"  --offset-ms X         start X ms after --start-at-us\n"
		"  --t0-us T             time origin of the CSV (default: the start time)\n"
		"  --warmup N            iterations left out of the JSON statistics (default 3)\n"
		"  --bulk-seconds S      duration of a bulk=1 profile's flow (default 10)\n"
		"  --hints               announce each iteration's bytes through libmltcp\n"
		"  --csv FILE            per-iteration CSV: job,iteration,bytes,start_us,\n"
		"                        comm_start_us,comm_end_us,end_us (microseconds from t0),\n"
		"                        rto,recoveries,tlp,undo,spurious_rto,window_repairs\n"
		"                        (see below)\n"
		"  --json FILE           summary JSON (default: stdout): iteration statistics and\n"
		"                        loss counters after --warmup, the process's CPU time\n"
		"Loss counters (send and ring): at each communication phase's start and end\n"
		"the job reads the TCP counters of its network namespace (/proc/net/netstat,\n"
		"TcpExt) and records the differences: rto = TCPTimeouts, recoveries =\n"
		"TCPSackRecovery + TCPRenoRecovery (fast retransmits), tlp = TCPLossProbes,\n"
		"undo = TCPFullUndo + TCPPartialUndo + TCPDSACKUndo + TCPLossUndo (spurious\n"
		"retransmissions detected), spurious_rto = TCPSpuriousRTOs.  They count every\n"
		"socket of the namespace: run each job (each ring rank) in a namespace of\n"
		"its own for its own figures.  window_repairs counts the job's own sending\n"
		"sockets: the corrupted windows MLTCP's BPF datapath repaired on them\n"
		"(libmltcp; needs root, unknown for other congestion controls).  A field\n"
		"this kernel lacks: empty in the CSV, null in the JSON (unknown, not 0).\n"
		"recv: confirms iterations; logs received bytes per job per time bin.\n"
		"  --port P              listen port (default 0: any, see --port-file)\n"
		"  --bind IP             listen address (default 0.0.0.0)\n"
		"  --port-file F         write the listening port to F\n"
		"  --log-dir D           on exit write D/rx-<job>.csv (bin_start_us,bytes)\n"
		"  --t0-us T, --bin-us B time origin and bin width (default now, 10000)\n"
		"  --duration-s S        exit after S seconds (default: at SIGTERM/SIGINT)\n"
		"ring: one worker of a job whose K workers (K = entries in --peers, 2..64) run\n"
		"a ring all-reduce, one process per worker (e.g. in separate namespaces).\n"
		"Rank I listens on the I-th --peers address and connects to rank I+1 (mod K).\n"
		"Per iteration: compute, then all-reduce the iteration's bytes (each bucket\n"
		"separately): 2(K-1) steps; in each the rank sends a chunk of bytes/K to the\n"
		"next rank and receives one from the previous, and the next step waits for\n"
		"both. Every received byte is checked. Takes send's options except --dst and\n"
		"--bulk-seconds; the profile needs conns=1 and no bulk. The CSV is send's\n"
		"(bytes = the buffer all-reduced); the JSON adds rank, ranks, bytes_sent and\n"
		"bytes_received (payload bytes on the wire).\n"
		"  --rank I              this worker's position in --peers (0-based)\n"
		"  --peers LIST          IP:PORT of every rank, comma-separated, in ring order\n"
		"  --bind IP             listen address (default: this rank's --peers address)\n"
		"  --connect-timeout-s S ranks may start in any order; fail if the ring is not\n"
		"                        connected after S seconds (default 10)\n"
		"  --io-timeout-s S      fail if a step makes no progress for S seconds beyond\n"
		"                        a compute phase (default 60)\n"
		"  --rx-log FILE         on exit write received payload bytes per time bin\n"
		"                        (bin_start_us,bytes; origin --t0-us, width --bin-us)\n"
		"exit codes: 0 ok, 2 bad usage or profile file (ring: also ranks that disagree\n"
		"on job, --peers or profile), 3 congestion control not registered, 4 network\n"
		"failure (ring: a neighbour that does not come up in time, goes away or\n"
		"stalls), 5 --hints without libmltcp. hints support: %s\n",
#ifdef MLTCP_EMU_HAVE_LIBMLTCP
		"built in"
#else
		"not built (no libmltcp at build time)"
#endif
	);
}

}  // namespace

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? kExitUsage : 0;
	}
	std::string cmd = argv[1];
	enum { O_DST = 256, O_PF, O_PROF, O_JOB, O_CC, O_ITER, O_START, O_OFF, O_T0, O_WARM,
	       O_BULK, O_HINTS, O_CSV, O_JSON, O_PORT, O_BIND, O_PORTF, O_LOG, O_BIN, O_DUR,
	       O_RANK, O_PEERS, O_CONN_TO, O_IO_TO, O_RXLOG, O_HELP };
	static const option opts[] = {
		{"dst", 1, nullptr, O_DST}, {"profile-file", 1, nullptr, O_PF},
		{"profile", 1, nullptr, O_PROF}, {"job", 1, nullptr, O_JOB},
		{"cc", 1, nullptr, O_CC}, {"iterations", 1, nullptr, O_ITER},
		{"start-at-us", 1, nullptr, O_START}, {"offset-ms", 1, nullptr, O_OFF},
		{"t0-us", 1, nullptr, O_T0}, {"warmup", 1, nullptr, O_WARM},
		{"bulk-seconds", 1, nullptr, O_BULK}, {"hints", 0, nullptr, O_HINTS},
		{"csv", 1, nullptr, O_CSV}, {"json", 1, nullptr, O_JSON},
		{"port", 1, nullptr, O_PORT}, {"bind", 1, nullptr, O_BIND},
		{"port-file", 1, nullptr, O_PORTF}, {"log-dir", 1, nullptr, O_LOG},
		{"bin-us", 1, nullptr, O_BIN}, {"duration-s", 1, nullptr, O_DUR},
		{"rank", 1, nullptr, O_RANK}, {"peers", 1, nullptr, O_PEERS},
		{"connect-timeout-s", 1, nullptr, O_CONN_TO}, {"io-timeout-s", 1, nullptr, O_IO_TO},
		{"rx-log", 1, nullptr, O_RXLOG},
		{"help", 0, nullptr, O_HELP}, {nullptr, 0, nullptr, 0}};
	SendOptions so;
	RecvOptions ro;
	RingOptions rg;
	const uint64_t kBig = 1ULL << 62;
	optind = 2;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, nullptr)) != -1) {
		const char *a = optarg;
		switch (c) {
		case O_DST: so.dst = a; break;
		case O_PF: so.profile_file = a; break;
		case O_PROF: so.profile = a; break;
		case O_JOB: so.job = a; break;
		case O_CC: so.cc = a; break;
		case O_ITER: so.iterations = parse_u64_opt("--iterations", a, 1000000); break;
		case O_START: so.start_at_us = parse_u64_opt("--start-at-us", a, kBig); break;
		case O_OFF: so.offset_us = parse_u64_opt("--offset-ms", a, 3600000) * 1000; break;
		case O_T0: so.t0_us = ro.t0_us = parse_u64_opt("--t0-us", a, kBig); break;
		case O_WARM: so.warmup = parse_u64_opt("--warmup", a, 1000000); break;
		case O_BULK: so.bulk_seconds = parse_u64_opt("--bulk-seconds", a, 86400); break;
		case O_HINTS: so.hints = true; break;
		case O_CSV: so.csv = a; break;
		case O_JSON: so.json = a; break;
		case O_PORT: ro.port = parse_u64_opt("--port", a, 65535); break;
		case O_BIND: ro.bind = rg.bind = a; break;
		case O_PORTF: ro.port_file = a; break;
		case O_LOG: ro.log_dir = a; break;
		case O_BIN: ro.bin_us = rg.bin_us = parse_u64_opt("--bin-us", a, 10000000); break;
		case O_DUR: ro.duration_s = parse_u64_opt("--duration-s", a, 86400); break;
		case O_RANK:
			rg.rank = parse_u64_opt("--rank", a, kMaxRingRanks - 1);
			rg.rank_given = true;
			break;
		case O_PEERS: rg.peers = a; break;
		case O_CONN_TO:
			rg.connect_timeout_s = parse_u64_opt("--connect-timeout-s", a, 3600);
			break;
		case O_IO_TO: rg.io_timeout_s = parse_u64_opt("--io-timeout-s", a, 3600); break;
		case O_RXLOG: rg.rx_log = a; break;
		case O_HELP: usage(stdout); return 0;
		default:
			fprintf(stderr, "mltcp-emu: bad option '%s' (see mltcp-emu --help)\n",
				argv[optind - 1]);
			return kExitUsage;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mltcp-emu: unexpected argument '%s'\n", argv[optind]);
		return kExitUsage;
	}
	if (cmd == "send") {
		if (so.job.empty())
			so.job = so.profile;
		return cmd_send(so);
	}
	if (cmd == "recv")
		return cmd_recv(ro);
	if (cmd == "ring") {
		if (so.job.empty())
			so.job = so.profile;
		return cmd_ring(so, rg);
	}
	if (cmd == "profiles") {
		if (so.profile_file.empty())
			fatal(kExitUsage, "profiles needs --profile-file FILE");
		try {
			for (const auto &p : load_profiles(so.profile_file))
				printf("%-16s bytes=%" PRIu64 " compute_us=%" PRIu64
				       " buckets=%u gap_us=%" PRIu64 " cycle=%zu async=%d conns=%u bulk=%d\n",
				       p.name.c_str(), p.bytes, p.compute_us, p.buckets, p.bucket_gap_us,
				       p.bytes_cycle.size(), p.async, p.conns, p.bulk);
		} catch (const ProfileError &e) {
			fatal(kExitUsage, e.what());
		}
		return 0;
	}
	fprintf(stderr, "mltcp-emu: unknown command '%s' (send, recv, ring, profiles; see --help)\n",
		cmd.c_str());
	return kExitUsage;
}
