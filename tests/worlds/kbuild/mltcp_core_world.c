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
	return 0;
}

static void __exit mltcp_core_world_exit(void)
{
}

module_init(mltcp_core_world_init);
module_exit(mltcp_core_world_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("MLTCP core: kernel compile check");
