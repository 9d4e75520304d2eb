// SPDX-License-Identifier: GPL-2.0
/*
 * insn_count: a QEMU TCG plugin that counts the guest instructions executed
 * between two marker instructions (bench/arena_bench.c -c, bench/README.md).
 *
 * A marker is the 7-byte no-op `nopl 0x5eaXYYYY(%rax)` (0f 1f 80 disp32):
 * X = 1 starts a measurement, X = 2 stops it, YYYY is a sequence number the
 * guest also prints next to the workload's name.  It executes as a no-op
 * with or without this plugin, so the guest binary is the same everywhere.
 *
 * Counting: one inline add per executed instruction into a per-vCPU counter
 * (per instruction, not per block: an access that faults leaves its block
 * early, and a per-block add would count instructions that never ran).  A
 * measurement is the counter's difference between the start and the stop
 * marker on the vCPU that executed both; the guest pins the measuring thread
 * to an isolated CPU (nohz_full, irqaffinity elsewhere), so only the
 * workload and the interrupts that still reach that CPU are counted.  The
 * guest repeats each measurement and bench/report takes the minimum: an
 * interrupt only ever adds.  On stop the plugin writes one line
 *	seq count vcpu
 * to the file named by the out= argument (flushed at once).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>


#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MARK_MAGIC	0x5ea00000u
#define MARK_MASK	0xfff00000u
#define MARK_START	1
#define MARK_STOP	2
#define MAX_VCPUS	64

static struct qemu_plugin_scoreboard *sb, *sb_open;
static qemu_plugin_u64 insns, open_flag;
static FILE *prof;
static GHashTable *prof_tab;	/* TB vaddr -> instructions, under lock */
static long prof_only = -1;	/* profsel=N: profile only the Nth measurement (from 0) */
static long nstarts;
static FILE *out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t start;
	int seq;	/* -1: no measurement open on this vCPU */
} st[MAX_VCPUS];

static void on_mark(unsigned int vcpu, void *udata)
{
	uint32_t disp = (uint32_t)(uintptr_t)udata;
	unsigned int op = (disp >> 16) & 0xf, seq = disp & 0xffff;
	uint64_t now = qemu_plugin_u64_get(insns, vcpu);

	if (vcpu >= MAX_VCPUS)
		return;
	if (op == MARK_START) {
		st[vcpu].start = now;
		st[vcpu].seq = (int)seq;
		qemu_plugin_u64_set(open_flag, vcpu, prof_only < 0 || nstarts == prof_only);
		nstarts++;
		return;
	}
	if (op != MARK_STOP)
		return;
	pthread_mutex_lock(&lock);
	if (st[vcpu].seq == (int)seq)
		fprintf(out, "%u %" PRIu64 " %u\n", seq, now - st[vcpu].start, vcpu);
	else	/* the stop ran on another vCPU than the start, or no start */
		fprintf(out, "%u -1 %u\n", seq, vcpu);
	fflush(out);
	pthread_mutex_unlock(&lock);
	st[vcpu].seq = -1;
	qemu_plugin_u64_set(open_flag, vcpu, 0);
}

struct tb_info {
	uint64_t vaddr;
	uint64_t n;
};

static void on_tb_prof(unsigned int vcpu, void *udata)
{
	struct tb_info *t = udata;
	uint64_t *c;

	(void)vcpu;
	pthread_mutex_lock(&lock);
	c = g_hash_table_lookup(prof_tab, &t->vaddr);
	if (!c) {
		c = g_new0(uint64_t, 2);
		c[0] = t->vaddr;
		g_hash_table_insert(prof_tab, c, c);
	}
	c[1] += t->n;
	pthread_mutex_unlock(&lock);
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;

	(void)id;
	if (prof) {
		struct tb_info *t = g_new(struct tb_info, 1);	/* lives as long as QEMU */

		t->vaddr = qemu_plugin_tb_vaddr(tb);
		t->n = n;
		qemu_plugin_register_vcpu_tb_exec_cond_cb(tb, on_tb_prof, QEMU_PLUGIN_CB_NO_REGS,
							  QEMU_PLUGIN_COND_NE, open_flag, 0, t);
	}
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint8_t b[7];
		uint32_t disp;

		qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(insn, QEMU_PLUGIN_INLINE_ADD_U64,
								    insns, 1);
		if (qemu_plugin_insn_size(insn) != sizeof(b) ||
		    qemu_plugin_insn_data(insn, b, sizeof(b)) != sizeof(b) ||
		    b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80)
			continue;
		memcpy(&disp, b + 3, sizeof(disp));
		if ((disp & MARK_MASK) != MARK_MAGIC)
			continue;
		qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS,
						       (void *)(uintptr_t)disp);
	}
}

static void on_atexit(qemu_plugin_id_t id, void *p)
{
	(void)id;
	(void)p;
	if (out)
		fclose(out);
	out = NULL;
	if (prof) {
		GHashTableIter it;
		gpointer k, v;

		g_hash_table_iter_init(&it, prof_tab);
		while (g_hash_table_iter_next(&it, &k, &v))
			fprintf(prof, "%" PRIx64 " %" PRIu64 "\n", ((uint64_t *)v)[0], ((uint64_t *)v)[1]);
		fclose(prof);
		prof = NULL;
	}
	qemu_plugin_scoreboard_free(sb);
	qemu_plugin_scoreboard_free(sb_open);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		if (!strncmp(argv[i], "profsel=", 8))
			prof_only = atol(argv[i] + 8);
		if (!strncmp(argv[i], "profile=", 8)) {
			prof = fopen(argv[i] + 8, "w");
			if (!prof) {
				perror(argv[i] + 8);
				return -1;
			}
			prof_tab = g_hash_table_new(g_int64_hash, g_int64_equal);
		}
	}
	if (!path) {
		fprintf(stderr, "insn_count: out=FILE is required\n");
		return -1;
	}
	if (info->system_emulation && info->system.max_vcpus > MAX_VCPUS) {
		fprintf(stderr, "insn_count: at most %d vCPUs\n", MAX_VCPUS);
		return -1;
	}
	out = fopen(path, "w");
	if (!out) {
		perror(path);
		return -1;
	}
	for (i = 0; i < MAX_VCPUS; i++)
		st[i].seq = -1;
	sb = qemu_plugin_scoreboard_new(sizeof(uint64_t));
	insns = qemu_plugin_scoreboard_u64(sb);
	sb_open = qemu_plugin_scoreboard_new(sizeof(uint64_t));
	open_flag = qemu_plugin_scoreboard_u64(sb_open);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_atexit, NULL);
	return 0;
}
