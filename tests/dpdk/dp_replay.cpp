// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// dp_replay.cpp - the DPDK transport's half of the datapath agreement test
// (tests/replay/mltcp_dp_replay.h): plays an event sequence through the
// transport's CongestionControl (mltcp, mltcp_cubic, mltcp_dcqcn and
// dcqcn) the way the engine calls it, and writes one decision per event.
//
//   dpdk_dp_replay EVENTS > DECISIONS
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "cc.h"

extern "C" {
#include "mltcp_dp_replay.h"
}

using namespace mltcp_dpdk;

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: dpdk_dp_replay EVENTS > DECISIONS\n");
		return 2;
	}
	FILE *f = std::fopen(argv[1], "rb");
	if (!f) {
		std::fprintf(stderr, "dpdk_dp_replay: %s: %s\n", argv[1], std::strerror(errno));
		return 1;
	}
	std::unique_ptr<CongestionControl> cc;
	uint32_t algo = MLTCP_DP_RENO, seq = 0;
	mltcp_dp_event e;
	while (std::fread(&e, sizeof(e), 1, f) == 1) {
		const uint64_t now_ns = (uint64_t)e.now_us * 1000;
		const uint32_t snd_una = (uint32_t)e.acked_total;
		if (e.kind == MLTCP_DP_INIT) {
			algo = (uint32_t)e.bytes;
			CcConfig c;
			c.kind = algo == MLTCP_DP_RENO	  ? CcKind::kMltcp
				 : algo == MLTCP_DP_CUBIC ? CcKind::kMltcpCubic
				 : e.acked_pkts		  ? CcKind::kMltcpDcqcn
							  : CcKind::kDcqcn;
			c.initial_cwnd = MLTCP_DP_INIT_CWND;
			c.max_cwnd = UINT32_MAX;
			cc = std::make_unique<CongestionControl>(c, now_ns, e.seed);
		} else if (!cc) {
			std::fprintf(stderr, "dpdk_dp_replay: event %u before the first INIT\n", seq);
			return 1;
		}
		switch (e.kind) {
		case MLTCP_DP_ACK:
			cc->OnAck({now_ns, e.acked_total, e.acked_pkts, e.srtt_us, e.cwnd_limited != 0,
				   false, e.rtt_us, snd_una, snd_una + e.inflight_bytes,
				   MLTCP_DP_SEGMENT});
			break;
		case MLTCP_DP_TX_START:
			cc->OnTxStart({now_ns, e.acked_total, e.srtt_us, e.min_rtt_us, MLTCP_DP_SEGMENT,
				       e.received_total});
			break;
		case MLTCP_DP_HINT:
			cc->Hint(e.acked_total, e.bytes, now_ns);
			break;
		case MLTCP_DP_LOSS:
			cc->OnLoss(now_ns);
			break;
		case MLTCP_DP_RTO:
			cc->OnRto(now_ns, snd_una + e.inflight_bytes);
			break;
		case MLTCP_DP_SENT:	// the engine: transmit start, then the send
			if (e.cwnd_limited)
				cc->OnTxStart({now_ns, e.acked_total, e.srtt_us, e.min_rtt_us, MLTCP_DP_SEGMENT,
					       e.received_total});
			cc->OnSent(e.bytes, now_ns);
			break;
		case MLTCP_DP_CNP:
			cc->OnCnp(now_ns);
			break;
		case MLTCP_DP_ADVANCE:
			cc->Advance(now_ns);
			break;
		}
		const CcStats s = cc->Stats();
		mltcp_dp_decision d{};
		d.seq = seq++;
		if (algo == MLTCP_DP_DCQCN) {
			d.rate_bps = s.rate_bps;
			d.target_bps = s.rate_target_bps;
		} else {
			d.cwnd = cc->cwnd();
			d.ssthresh = cc->ssthresh();
		}
		d.gain = s.gain;
		d.iterations = s.iterations;
		d.hinted = s.hinted;
		d.iter_bytes = s.iter_bytes;
		if (std::fwrite(&d, sizeof(d), 1, stdout) != 1) {
			std::fprintf(stderr, "dpdk_dp_replay: write failed\n");
			return 1;
		}
	}
	std::fclose(f);
	return 0;
}
