// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// cc_bench.cpp - congestion-control cost per packet of each mode of the DPDK
// transport, next to reno in the same run (bench-dpdk), best of kRounds
// rounds in which the modes alternate.  Per packet: OnSent,
// Advance (rate timers) and one OnAck, as the engine calls them; an idle gap
// every kPktsPerIter packets makes the MLTCP modes detect iterations.
#include <chrono>
#include <algorithm>
#include <cstdio>

#include "cc.h"

using namespace mltcp_dpdk;

namespace {
constexpr uint32_t kPkts = 4000000;
constexpr uint32_t kPktsPerIter = 5000;
constexpr uint32_t kMss = 1400;
constexpr int kRounds = 9;	// modes alternate within a round: load hits all alike

double NsPerPacket(CcKind kind)
{
	double best = 1e30;
	{
		CcConfig c;
		c.kind = kind;
		c.max_cwnd = 4096;
		CongestionControl cc(c, 0, 0);
		uint64_t now = 1000000, acked = 0;
		volatile uint64_t sink = 0;
		auto t0 = std::chrono::steady_clock::now();
		for (uint32_t i = 0; i < kPkts; i++) {
			if (i % kPktsPerIter == 0) {
				now += 50000000;	// 50 ms compute gap
				cc.OnTxStart({now, acked, 50, 40, kMss, 0});
			}
			now += 1000;
			cc.OnSent(kMss, now);
			cc.Advance(now);
			acked += kMss;
			cc.OnAck({now, acked, 1, 50, true, false});
			sink += cc.cwnd() + cc.rate_bps();
		}
		double ns = std::chrono::duration<double, std::nano>(
				    std::chrono::steady_clock::now() - t0).count() / kPkts;
		best = std::min(best, ns);
		(void)sink;
	}
	return best;
}
}  // namespace

int main()
{
	const CcKind kinds[] = {CcKind::kReno, CcKind::kMltcp, CcKind::kCubic, CcKind::kMltcpCubic,
				CcKind::kDcqcn, CcKind::kMltcpDcqcn};
	constexpr size_t n = sizeof(kinds) / sizeof(kinds[0]);
	double best[n];
	for (size_t k = 0; k < n; k++)
		best[k] = 1e30;
	for (int r = 0; r < kRounds; r++)
		for (size_t k = 0; k < n; k++)
			best[k] = std::min(best[k], NsPerPacket(kinds[k]));
	for (size_t k = 0; k < n; k++)
		printf("CC-COST mode=%s ns_per_pkt=%.2f ratio_vs_reno=%.2f\n", CcName(kinds[k]), best[k],
		       best[k] / best[0]);
	return 0;
}
