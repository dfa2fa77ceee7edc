// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// dp_replay.cpp - the RDMA datapath's half of the datapath agreement test
// (tests/replay/mltcp_dp_replay.h): plays a DCQCN event sequence through
// QpControl the way mltcp-rdma calls it (posts, completions, CNP counts,
// hints, ticks) and writes one decision per event.
//
//   rdma_dp_replay EVENTS > DECISIONS
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "qp_control.h"

extern "C" {
#include "mltcp_dp_replay.h"
}

using namespace mltcp_rdma;

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: rdma_dp_replay EVENTS > DECISIONS\n");
		return 2;
	}
	FILE *f = std::fopen(argv[1], "rb");
	if (!f) {
		std::fprintf(stderr, "rdma_dp_replay: %s: %s\n", argv[1], std::strerror(errno));
		return 1;
	}
	const mltcp::Params params;
	const mltcp::DcqcnParams dparams;
	std::unique_ptr<QpControl> qp;
	uint64_t completed = 0;
	uint32_t seq = 0;
	mltcp_dp_event e;
	while (std::fread(&e, sizeof(e), 1, f) == 1) {
		const uint64_t now_ns = (uint64_t)e.now_us * 1000;
		if (e.kind == MLTCP_DP_INIT) {
			if (e.bytes != MLTCP_DP_DCQCN) {
				std::fprintf(stderr, "rdma_dp_replay: only DCQCN sequences (event %u)\n", seq);
				return 1;
			}
			qp = std::make_unique<QpControl>(e.acked_pkts ? Control::kMltcpDcqcn : Control::kDcqcn,
							 params, dparams, 0, 1 << 20, now_ns, e.seed);
			completed = 0;
		} else if (!qp) {
			std::fprintf(stderr, "rdma_dp_replay: event %u before the first INIT\n", seq);
			return 1;
		}
		switch (e.kind) {
		case MLTCP_DP_SENT:
			qp->set_srtt_us(e.srtt_us);
			qp->OnPost(e.bytes, e.cwnd_limited != 0, now_ns);
			break;
		case MLTCP_DP_ACK:
			qp->OnCompletion(e.acked_total - completed, now_ns);
			completed = e.acked_total;
			break;
		case MLTCP_DP_CNP:
			qp->OnCnps(1, now_ns);
			break;
		case MLTCP_DP_HINT:
			qp->Hint(e.bytes, now_ns);
			break;
		case MLTCP_DP_ADVANCE:
			qp->Tick(now_ns);
			break;
		case MLTCP_DP_INIT:
			break;
		default:
			std::fprintf(stderr, "rdma_dp_replay: event %u: kind %u is not DCQCN's\n", seq, e.kind);
			return 1;
		}
		mltcp_dp_decision d{};
		d.seq = seq++;
		d.rate_bps = qp->RateBps();
		d.target_bps = qp->TargetBps();
		d.gain = qp->Gain();
		d.iterations = qp->iter().iterations;
		d.hinted = qp->iter().hinted;
		d.iter_bytes = qp->iter().iter_bytes;
		if (std::fwrite(&d, sizeof(d), 1, stdout) != 1) {
			std::fprintf(stderr, "rdma_dp_replay: write failed\n");
			return 1;
		}
	}
	std::fclose(f);
	return 0;
}
