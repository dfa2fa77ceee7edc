// SPDX-License-Identifier: GPL-2.0-only
/*
 * mltcp_replay_kmod.c - TEST-ONLY kernel module for the same-input agreement
 * test.  Not shipped: tcp_mltcp.ko has no replay interface.  It compiles the
 * policy core with the same kbuild flags and headers as tcp_mltcp.ko and runs
 * an event sequence through it inside the guest kernel:
 *
 *   cat events.bin > /sys/kernel/debug/mltcp_replay/run   (resets, replays)
 *   cat /sys/kernel/debug/mltcp_replay/run > decisions.bin
 *
 * Records are struct mltcp_replay_event / _decision (mltcp_replay.h); the
 * userspace replayer (mltcp_replay.cpp) produces the reference decisions
 * with the same step function.  The hook glue of tcp_mltcp.ko itself (which
 * tcp_sock fields feed which call) is checked by the guest's iteration tests.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "mltcp.h"
#include "mltcp_replay.h"

#define REPLAY_MAX_EVENTS	(1U << 18)	/* 16 MiB of decisions */

static DEFINE_MUTEX(replay_lock);
static struct mltcp_replay_flow replay_flow;
static struct mltcp_params replay_params;
static struct mltcp_replay_decision *replay_out;	/* vmalloc'd */
static u32 replay_count;
static u8 replay_partial[MLTCP_REPLAY_EVENT_SIZE];	/* split record */
static size_t replay_partial_len;
static struct dentry *replay_dir;

static void replay_reset(void)
{
	mltcp_params_default(&replay_params);
	mltcp_iter_init(&replay_flow.it, 0, 0);
	mltcp_reno_cache_init(&replay_flow.cache);
	replay_count = 0;
	replay_partial_len = 0;
}

static int replay_open(struct inode *inode, struct file *f)
{
	if (f->f_mode & FMODE_WRITE) {
		mutex_lock(&replay_lock);
		replay_reset();
		mutex_unlock(&replay_lock);
	}
	return 0;
}

static int replay_one(const struct mltcp_replay_event *ev)
{
	if (replay_count >= REPLAY_MAX_EVENTS)
		return -ENOSPC;
	mltcp_replay_step(&replay_flow, &replay_params, ev, replay_count,
			  &replay_out[replay_count]);
	replay_count++;
	return 0;
}

static ssize_t replay_write(struct file *f, const char __user *buf,
			    size_t len, loff_t *ppos)
{
	struct mltcp_replay_event ev;
	size_t done = 0;

	mutex_lock(&replay_lock);
	while (done < len) {
		size_t need = MLTCP_REPLAY_EVENT_SIZE - replay_partial_len;
		size_t n = min(need, len - done);

		if (copy_from_user(replay_partial + replay_partial_len, buf + done, n)) {
			mutex_unlock(&replay_lock);
			return -EFAULT;
		}
		replay_partial_len += n;
		done += n;
		if (replay_partial_len == MLTCP_REPLAY_EVENT_SIZE) {
			memcpy(&ev, replay_partial, sizeof(ev));
			replay_partial_len = 0;
			if (replay_one(&ev)) {
				mutex_unlock(&replay_lock);
				return -ENOSPC;
			}
		}
	}
	mutex_unlock(&replay_lock);
	*ppos += len;
	return len;
}

static ssize_t replay_read(struct file *f, char __user *buf, size_t len,
			   loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&replay_lock);
	ret = simple_read_from_buffer(buf, len, ppos, replay_out,
				      (size_t)replay_count * MLTCP_REPLAY_DECISION_SIZE);
	mutex_unlock(&replay_lock);
	return ret;
}

static const struct file_operations replay_fops = {
	.owner	= THIS_MODULE,
	.open	= replay_open,
	.read	= replay_read,
	.write	= replay_write,
	.llseek	= no_llseek,
};

static int __init replay_init(void)
{
	BUILD_BUG_ON(sizeof(struct mltcp_replay_event) != MLTCP_REPLAY_EVENT_SIZE);
	BUILD_BUG_ON(sizeof(struct mltcp_replay_decision) != MLTCP_REPLAY_DECISION_SIZE);

	replay_out = vzalloc(array_size(REPLAY_MAX_EVENTS, MLTCP_REPLAY_DECISION_SIZE));
	if (!replay_out)
		return -ENOMEM;
	replay_reset();
	replay_dir = debugfs_create_dir("mltcp_replay", NULL);
	debugfs_create_file("run", 0600, replay_dir, NULL, &replay_fops);
	return 0;
}

static void __exit replay_exit(void)
{
	debugfs_remove_recursive(replay_dir);
	vfree(replay_out);
}

module_init(replay_init);
module_exit(replay_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("MLTCP test only: replay events through the policy core in the kernel");
