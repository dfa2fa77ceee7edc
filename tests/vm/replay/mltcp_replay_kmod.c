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
 * with the same step function.
 *
 * The second file runs the datapath agreement test through tcp_mltcp.ko
 * itself: its tcp_congestion_ops ("mltcp" or "mltcp_cubic", chosen with
 * TCP_CONGESTION on an unconnected kernel socket) are called on that
 * socket, with the tcp_sock fields set as TCP would set them for each event
 * (tests/replay/mltcp_dp_replay.h):
 *
 *   cat dp-events.bin > /sys/kernel/debug/mltcp_replay/dp
 *   cat /sys/kernel/debug/mltcp_replay/dp > dp-decisions.bin
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/inet_diag.h>
#include <linux/net.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "mltcp.h"
#include "mltcp_replay.h"
#include "mltcp_dp_replay.h"
#include "tcp_mltcp_info.h"

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


/* ---------------------------------------------------------------------- */
/* The datapath agreement test through tcp_mltcp.ko's own hooks.          */

static struct socket *dp_sock;
static const struct tcp_congestion_ops *dp_ops;
static struct mltcp_dp_decision *dp_out;	/* vmalloc'd */
static u32 dp_count;
static u8 dp_partial[MLTCP_DP_EVENT_SIZE];
static size_t dp_partial_len;
static int dp_error;

static void dp_release(void)
{
	if (dp_sock)
		sock_release(dp_sock);
	dp_sock = NULL;
	dp_ops = NULL;
}

/* A fresh socket running `name`; its hooks are called directly below. */
static int dp_new_flow(const char *name)
{
	int err;

	dp_release();
	err = sock_create_kern(&init_net, AF_INET, SOCK_STREAM, IPPROTO_TCP, &dp_sock);
	if (err)
		return err;
	err = dp_sock->ops->setsockopt(dp_sock, SOL_TCP, TCP_CONGESTION,
				       KERNEL_SOCKPTR((void *)name), strlen(name));
	if (err) {
		pr_err("mltcp_replay: TCP_CONGESTION %s: %d (is tcp_mltcp loaded?)\n", name, err);
		dp_release();
		return err;
	}
	dp_ops = inet_csk(dp_sock->sk)->icsk_ca_ops;
	if (strcmp(dp_ops->name, name)) {
		dp_release();
		return -ENOENT;
	}
	return 0;
}

/* What TCP has set in tcp_sock when the event reaches the hooks. */
static void dp_set_state(struct sock *sk, const struct mltcp_dp_event *ev)
{
	struct tcp_sock *tp = tcp_sk(sk);

	tp->bytes_acked = ev->acked_total;
	tp->bytes_received = ev->received_total;
	tp->snd_una = (u32)ev->acked_total;
	tp->snd_nxt = (u32)ev->acked_total + ev->inflight_bytes;
	tp->tcp_mstamp = ev->now_us;
	tp->srtt_us = ev->srtt_us << 3;
	minmax_reset(&tp->rtt_min, tcp_jiffies32, ev->min_rtt_us ? ev->min_rtt_us : ~0U);
	tp->mss_cache = MLTCP_DP_SEGMENT;
	tp->packets_out = 0;
	tp->chrono_type = TCP_CHRONO_UNSPEC;
	sk->sk_pacing_rate = 0;
	sk->sk_pacing_status = SK_PACING_NONE;
}

static int dp_step(const struct mltcp_dp_event *ev)
{
	struct mltcp_params seed_params;
	struct mltcp_dp_decision *d;
	struct tcp_mltcp_info info;
	union tcp_cc_info raw;
	struct tcp_sock *tp;
	struct sock *sk;
	int attr, err;
	u32 ss;

	if (dp_count >= REPLAY_MAX_EVENTS)
		return -ENOSPC;
	if (ev->kind == MLTCP_DP_INIT) {
		if (ev->bytes == MLTCP_DP_RENO)
			err = dp_new_flow("mltcp");
		else if (ev->bytes == MLTCP_DP_CUBIC)
			err = dp_new_flow("mltcp_cubic");
		else
			err = -EOPNOTSUPP;	/* no DCQCN in the kernel module */
		if (err)
			return err;
	} else if (!dp_sock) {
		return -EINVAL;
	}
	sk = dp_sock->sk;
	tp = tcp_sk(sk);
	dp_set_state(sk, ev);
	switch (ev->kind) {
	case MLTCP_DP_INIT:
		tcp_snd_cwnd_set(tp, MLTCP_DP_INIT_CWND);
		tp->snd_ssthresh = TCP_INFINITE_SSTHRESH;
		tp->snd_cwnd_cnt = 0;
		tp->snd_cwnd_clamp = ~0U;
		dp_ops->init(sk);
		/* The module seeds the first iteration with get_random_u32();
		 * the sequence's seed replaces it, as in every harness.  Both
		 * variants' state begins with the tracker. */
		BUILD_BUG_ON(offsetof(struct mltcp_reno_flow, it) != 0);
		BUILD_BUG_ON(offsetof(struct mltcp_cubic_flow, it) != 0);
		mltcp_params_default(&seed_params);
		mltcp_iter_seed(inet_csk_ca(sk), &seed_params, ev->seed);
		break;
	case MLTCP_DP_ACK:
		if (dp_ops->in_ack_event)
			dp_ops->in_ack_event(sk, 0);
		if (dp_ops->pkts_acked) {
			struct ack_sample sample = {
				.pkts_acked = ev->acked_pkts,
				.rtt_us = ev->rtt_us,
				.in_flight = ev->inflight_bytes,
			};
			dp_ops->pkts_acked(sk, &sample);
		}
		/* tcp_is_cwnd_limited(): the flag, and in slow start a
		 * window below twice what is in flight. */
		tp->is_cwnd_limited = ev->cwnd_limited ? 1 : 0;
		tp->max_packets_out = ev->cwnd_limited ? tcp_snd_cwnd(tp) : 0;
		dp_ops->cong_avoid(sk, tp->snd_una, ev->acked_pkts);
		break;
	case MLTCP_DP_TX_START:
		dp_ops->cwnd_event(sk, CA_EVENT_TX_START);
		break;
	case MLTCP_DP_LOSS:
	case MLTCP_DP_RTO:
		ss = dp_ops->ssthresh(sk);
		tp->snd_ssthresh = ss;
		tcp_snd_cwnd_set(tp, ev->kind == MLTCP_DP_RTO ? 1 : ss);
		tp->snd_cwnd_cnt = 0;
		if (ev->kind == MLTCP_DP_RTO && dp_ops->set_state)
			dp_ops->set_state(sk, TCP_CA_Loss);
		break;
	default:
		return -EOPNOTSUPP;	/* hints and DCQCN: not this module's */
	}
	memset(&raw, 0, sizeof(raw));
	if (dp_ops->get_info(sk, ~0U, &attr, &raw) != sizeof(info))
		return -EIO;
	memcpy(&info, &raw, sizeof(info));
	d = &dp_out[dp_count];
	memset(d, 0, sizeof(*d));
	d->seq = dp_count;
	d->cwnd = tcp_snd_cwnd(tp);
	d->ssthresh = tp->snd_ssthresh;
	d->gain = info.gain;
	d->iterations = info.iterations;
	d->iter_bytes = info.iter_bytes;
	dp_count++;
	return 0;
}

static int dp_open(struct inode *inode, struct file *f)
{
	if (f->f_mode & FMODE_WRITE) {
		mutex_lock(&replay_lock);
		dp_release();
		dp_count = 0;
		dp_partial_len = 0;
		dp_error = 0;
		mutex_unlock(&replay_lock);
	}
	return 0;
}

static ssize_t dp_write(struct file *f, const char __user *buf, size_t len, loff_t *ppos)
{
	struct mltcp_dp_event ev;
	size_t done = 0;
	int err = 0;

	mutex_lock(&replay_lock);
	while (done < len && !err) {
		size_t n = min(MLTCP_DP_EVENT_SIZE - dp_partial_len, len - done);

		if (copy_from_user(dp_partial + dp_partial_len, buf + done, n)) {
			err = -EFAULT;
			break;
		}
		dp_partial_len += n;
		done += n;
		if (dp_partial_len == MLTCP_DP_EVENT_SIZE) {
			memcpy(&ev, dp_partial, sizeof(ev));
			dp_partial_len = 0;
			err = dp_step(&ev);
			if (err)
				pr_err("mltcp_replay: dp event %u (kind %u): %d\n", dp_count, ev.kind, err);
		}
	}
	mutex_unlock(&replay_lock);
	if (err)
		return err;
	*ppos += len;
	return len;
}

static ssize_t dp_read(struct file *f, char __user *buf, size_t len, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&replay_lock);
	ret = simple_read_from_buffer(buf, len, ppos, dp_out,
				      (size_t)dp_count * MLTCP_DP_DECISION_SIZE);
	mutex_unlock(&replay_lock);
	return ret;
}

static const struct file_operations dp_fops = {
	.owner	= THIS_MODULE,
	.open	= dp_open,
	.read	= dp_read,
	.write	= dp_write,
	.llseek	= no_llseek,
};

static int __init replay_init(void)
{
	BUILD_BUG_ON(sizeof(struct mltcp_replay_event) != MLTCP_REPLAY_EVENT_SIZE);
	BUILD_BUG_ON(sizeof(struct mltcp_replay_decision) != MLTCP_REPLAY_DECISION_SIZE);

	BUILD_BUG_ON(sizeof(struct mltcp_dp_event) != MLTCP_DP_EVENT_SIZE);
	BUILD_BUG_ON(sizeof(struct mltcp_dp_decision) != MLTCP_DP_DECISION_SIZE);

	replay_out = vzalloc(array_size(REPLAY_MAX_EVENTS, MLTCP_REPLAY_DECISION_SIZE));
	dp_out = vzalloc(array_size(REPLAY_MAX_EVENTS, MLTCP_DP_DECISION_SIZE));
	if (!replay_out || !dp_out) {
		vfree(replay_out);
		vfree(dp_out);
		return -ENOMEM;
	}
	replay_reset();
	replay_dir = debugfs_create_dir("mltcp_replay", NULL);
	debugfs_create_file("run", 0600, replay_dir, NULL, &replay_fops);
	debugfs_create_file("dp", 0600, replay_dir, NULL, &dp_fops);
	return 0;
}

static void __exit replay_exit(void)
{
	debugfs_remove_recursive(replay_dir);
	dp_release();
	vfree(dp_out);
	vfree(replay_out);
}

module_init(replay_init);
module_exit(replay_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("MLTCP test only: replay events through the policy core in the kernel");
