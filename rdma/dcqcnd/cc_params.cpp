// cc_params.cpp - the table of firmware DCQCN parameters (see cc_params.h).
//
// Sources:
//  - names on the inbox driver's debugfs, their order and the firmware field
//    each one sets: drivers/infiniband/hw/mlx5/cong.c, mlx5_ib_dbg_cc_name[]
//    and mlx5_ib_set_cc_param_mask_val() (torvalds/linux master, Dec 2026;
//    the same 20 names, without rtt_resp_*, are in Debian's 6.1.0-57
//    mlx5_ib.ko: `strings mlx5_ib.ko`).  Every file is created mode 0600;
//    a write is parsed with kstrtou32 (decimal, 0x hex or 0 octal) and sent
//    to the firmware as MODIFY_CONG_PARAMS; a read is QUERY_CONG_PARAMS.
//    The fields are 32 bits wide (mlx5_ifc_cong_control_r_roce_ecn_rp_bits).
//  - names on MLNX_OFED's sysfs: the files this daemon has always written
//    (ecn/roce_rp/rpg_ai_rate, rpg_hai_rate) and NVIDIA's "DCQCN Parameters"
//    table (community.mellanox.com DOC-2790; networking-docs.nvidia.com,
//    DOCA "DCQCN CC Parameters"), whose MLNX_OFED column names the files.
//  - units, ranges and defaults: the same NVIDIA table.  It gives the rate
//    limits as "line rate"; the daemon reads the netdev's speed for that.
//    rpg_byte_reset's unit (64-byte blocks) and the ranges of rpg_gd and
//    min_time_between_cnps are from DOC-2790 only; the daemon never writes
//    those, it only lists them.
#include "cc_params.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace dcqcnd {

const CcParam kCcParams[] = {
	// field, debugfs, MLNX_OFED sysfs, unit, min, max, default, role
	{"clamp_tgt_rate", "rp_clamp_tgt_rate", "roce_rp/clamp_tgt_rate",
	 "flag", 0, 1, 0, Role::kListed},
	{"clamp_tgt_rate_after_time_inc", "rp_clamp_tgt_rate_ati",
	 "roce_rp/clamp_tgt_rate_after_time_inc", "flag", 0, 1, 1, Role::kListed},
	{"rpg_time_reset", "rp_time_reset", "roce_rp/rpg_time_reset",
	 "us", 1, 131071, 300, Role::kListed},
	{"rpg_byte_reset", "rp_byte_reset", "roce_rp/rpg_byte_reset",
	 "64-byte blocks", 0, 32767, 32767, Role::kListed},
	{"rpg_threshold", "rp_threshold", "roce_rp/rpg_threshold",
	 "increase events", 1, 31, 1, Role::kListed},
	{"rpg_ai_rate", "rp_ai_rate", "roce_rp/rpg_ai_rate",
	 "Mbit/s", 1, kLineRate, 5, Role::kAiRate},
	{"rpg_max_rate", "rp_max_rate", "roce_rp/rpg_max_rate",
	 "Mbit/s (0: port speed)", 0, kLineRate, 0, Role::kListed},
	{"rpg_hai_rate", "rp_hai_rate", "roce_rp/rpg_hai_rate",
	 "Mbit/s", 1, kLineRate, 50, Role::kHaiRate},
	{"rpg_min_dec_fac", "rp_min_dec_fac", "roce_rp/rpg_min_dec_fac",
	 "percent", 0, 100, 50, Role::kListed},
	{"rpg_min_rate", "rp_min_rate", "roce_rp/rpg_min_rate",
	 "Mbit/s", 0, kLineRate, 1, Role::kListed},
	{"rate_to_set_on_first_cnp", "rp_rate_to_set_on_first_cnp",
	 "roce_rp/rate_to_set_on_first_cnp", "Mbit/s (0: port speed)", 0, kLineRate, 0,
	 Role::kListed},
	{"dce_tcp_g", "rp_dce_tcp_g", "roce_rp/dce_tcp_g",
	 "1/1024", 0, 1023, 1019, Role::kListed},
	{"dce_tcp_rtt", "rp_dce_tcp_rtt", "roce_rp/dce_tcp_rtt",
	 "us", 1, 131071, 1, Role::kListed},
	{"rate_reduce_monitor_period", "rp_rate_reduce_monitor_period",
	 "roce_rp/rate_reduce_monitor_period", "us", 1, UINT32_MAX, 4, Role::kListed},
	{"initial_alpha_value", "rp_initial_alpha_value", "roce_rp/initial_alpha_value",
	 "1/1024", 0, 1023, 1023, Role::kListed},
	{"rpg_gd", "rp_gd", "roce_rp/rpg_gd", "log2 of the alpha divisor", 0, 15, 11,
	 Role::kListed},
	{"min_time_between_cnps", "np_min_time_between_cnps",
	 "roce_np/min_time_between_cnps", "us", 0, 4095, 4, Role::kListed},
	{"cnp_dscp", "np_cnp_dscp", "roce_np/cnp_dscp", "DSCP", 0, 63, 48, Role::kListed},
	{"cnp_prio_mode", "np_cnp_prio_mode", nullptr, "flag", 0, 1, 1, Role::kListed},
	{"cnp_802p_prio", "np_cnp_prio", "roce_np/cnp_802p_prio", "PCP", 0, 7, 6,
	 Role::kListed},
	// Newer than Debian 12's 6.1: created only with the roce_cc_general cap.
	{"rtt_resp_dscp_valid", "rtt_resp_dscp_valid", nullptr, "flag", 0, 1, 0,
	 Role::kListed},
	{"rtt_resp_dscp", "rtt_resp_dscp", nullptr, "DSCP", 0, 63, 0, Role::kListed},
};

const size_t kNumCcParams = sizeof(kCcParams) / sizeof(kCcParams[0]);

const char *BackendName(Backend b)
{
	return b == Backend::kDebugfs ? "debugfs" : "sysfs";
}

const char *ParamName(const CcParam &p, Backend b)
{
	return b == Backend::kDebugfs ? p.debugfs : p.sysfs;
}

const CcParam *FindParam(Backend b, const std::string &name)
{
	for (size_t i = 0; i < kNumCcParams; i++) {
		const char *n = ParamName(kCcParams[i], b);
		if (n && name == n)
			return &kCcParams[i];
	}
	return nullptr;
}

const CcParam *FindRole(Role r)
{
	for (size_t i = 0; i < kNumCcParams; i++)
		if (kCcParams[i].role == r)
			return &kCcParams[i];
	return nullptr;
}

uint64_t ParamMax(const CcParam &p, uint64_t line_mbps)
{
	if (p.max != kLineRate)
		return p.max;
	return line_mbps ? line_mbps : kMaxLineMbps;
}

bool ParamInRange(const CcParam &p, uint64_t v, uint64_t line_mbps)
{
	return v >= p.min && v <= ParamMax(p, line_mbps);
}

std::string RangeText(const CcParam &p, uint64_t line_mbps)
{
	char buf[96];
	snprintf(buf, sizeof buf, "%" PRIu64 "..%" PRIu64 " %s", p.min, ParamMax(p, line_mbps),
		 p.unit);
	return buf;
}

void PrintTable(FILE *f)
{
	fprintf(f, "# firmware field, debugfs cc_params/ name, MLNX_OFED ecn/ name, "
		   "unit, min, max, default, written (tab-separated)\n");
	for (size_t i = 0; i < kNumCcParams; i++) {
		const CcParam &p = kCcParams[i];
		char max[24];
		if (p.max == kLineRate)
			snprintf(max, sizeof max, "line-rate");
		else
			snprintf(max, sizeof max, "%" PRIu64, p.max);
		fprintf(f, "%s\t%s\t%s\t%s\t%" PRIu64 "\t%s\t%" PRIu64 "\t%s\n", p.field, p.debugfs,
			p.sysfs ? p.sysfs : "-", p.unit, p.min, max, p.fw_default,
			p.role == Role::kListed ? "no" : "scaled-by-gain");
	}
}

}  // namespace dcqcnd
