// SPDX-License-Identifier: GPL-2.0
/*
 * mltcp_core_world.c - proves the policy core compiles unchanged in the
 * kernel: every core entry point is referenced from a module built with
 * -Werror against the Debian kernel headers by `make check`.  It is built,
 * not loaded (this host cannot load modules; the VM rig loads the real one).
 */
#include <linux/module.h>
#include <linux/ktime.h>
#include "mltcp.h"

static struct mltcp_params world_params;
static struct mltcp_iter world_iter;
static struct mltcp_dcqcn_params world_dcqcn_params;
static struct mltcp_dcqcn_rp world_rp;
static struct mltcp_dcqcn_np world_np;
static struct mltcp_reno_flow world_reno;
static struct mltcp_cubic_flow world_cubic;
static struct mltcp_dcqcn_flow world_dcqcn;
static struct mltcp_window world_win;
static struct mltcp_job_member world_member;
static struct mltcp_job_activity world_job;

static int __init mltcp_core_world_init(void)
{
	u64 now = ktime_get_ns() / NSEC_PER_USEC;
	u32 gain;

	BUILD_BUG_ON(sizeof(struct mltcp_iter) != 40);
	mltcp_params_default(&world_params);
	if (mltcp_params_validate(&world_params) != MLTCP_PARAM_OK)
		return -EINVAL;
	mltcp_iter_init(&world_iter, 0, (u32)now);
	mltcp_iter_on_ack(&world_iter, 1000, (u32)now);
	mltcp_iter_on_tx_start(&world_iter, &world_params, 1000, (u32)now, 100);
	mltcp_iter_hint(&world_iter, 1000, 5000, (u32)now);
	mltcp_job_member_on_tx_start(&world_iter, &world_job, &world_params, 1000,
				     (u32)now + 3000, 100);
	mltcp_job_activity_touch(&world_job, &world_params, &world_iter, (u32)now + 3000, 1);
	{
		struct mltcp_job_delta d;

		if (mltcp_job_member_update(&world_member, &world_iter, &d))
			pr_info("mltcp_core_world: job ratio %u\n",
				mltcp_job_ratio(d.iter_bytes, d.bytes_per_iter));
		mltcp_job_member_leave(&world_member, &d);
	}
	gain = mltcp_gain(&world_iter, &world_params);
	pr_info("mltcp_core_world: gain %u w %u cnt %u\n", gain,
		mltcp_reno_ai_w(10, gain), mltcp_cubic_cnt(10, gain));

	mltcp_dcqcn_params_default(&world_dcqcn_params);
	mltcp_dcqcn_rp_init(&world_rp, &world_dcqcn_params, now);
	mltcp_dcqcn_np_init(&world_np);
	mltcp_dcqcn_advance(&world_rp, &world_dcqcn_params, now + 100, gain);
	mltcp_dcqcn_on_sent(&world_rp, &world_dcqcn_params, 1 << 20, gain);
	if (mltcp_dcqcn_np_on_ce(&world_np, &world_dcqcn_params, now))
		mltcp_dcqcn_on_cnp(&world_rp, &world_dcqcn_params, now);

	BUILD_BUG_ON(sizeof(struct mltcp_cubic_flow) != 104);
	mltcp_window_init(&world_win, 10, 1 << 16);
	mltcp_reno_flow_init(&world_reno, 0, (u32)now);
	mltcp_reno_flow_cong_avoid(&world_reno, &world_params, &world_win, 3, 1448);
	mltcp_cubic_flow_init(&world_cubic, 0, (u32)now, 1);
	mltcp_cubic_flow_tx_start(&world_cubic, (u32)now + 5000);
	mltcp_cubic_flow_cong_avoid(&world_cubic, &world_params, &world_win, 3, (u32)now, 1448);
	pr_info("mltcp_core_world: ssthresh %u %u root %u\n",
		mltcp_reno_flow_ssthresh(&world_reno, &world_params, world_win.cwnd),
		mltcp_cubic_flow_ssthresh(&world_cubic, &world_params, world_win.cwnd),
		mltcp_cubic_root(1000000));
	mltcp_dcqcn_flow_init(&world_dcqcn, &world_dcqcn_params, 1, now);
	mltcp_dcqcn_flow_on_tx_start(&world_dcqcn, &world_params, &world_dcqcn_params, 0, now, 100);
	mltcp_dcqcn_flow_hint(&world_dcqcn, &world_params, &world_dcqcn_params, 0, 1 << 20, now);
	mltcp_dcqcn_flow_on_sent(&world_dcqcn, &world_params, &world_dcqcn_params, 1 << 16, now + 10);
	mltcp_dcqcn_flow_on_ack(&world_dcqcn, 1 << 16, now + 20);
	mltcp_dcqcn_flow_on_cnps(&world_dcqcn, &world_dcqcn_params, 2, now + 30);
	pr_info("mltcp_core_world: dcqcn rate %llu\n",
		(unsigned long long)mltcp_dcqcn_flow_rate_bps(&world_dcqcn));
	return 0;
}

static void __exit mltcp_core_world_exit(void)
{
}

module_init(mltcp_core_world_init);
module_exit(mltcp_core_world_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("MLTCP core: kernel compile check");
