// SPDX-License-Identifier: GPL-2.0
/*
 * Resolve non-exported kernel symbols.  kallsyms_lookup_name() is itself not
 * exported since 5.7; a kprobe registered on it reports its address.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/kernel.h>

#include "ksyms.h"

struct arena_ksyms ksyms;

static unsigned long (*kallsyms_lookup_name_fn)(const char *name);

unsigned long ksyms_lookup(const char *name)
{
	return kallsyms_lookup_name_fn ? kallsyms_lookup_name_fn(name) : 0;
}

#define KSYM(field, symbol) { symbol, (void **)&ksyms.field }

static const struct {
	const char *name;
	void **slot;
} ksym_table[] = {
	KSYM(bpf_map_new_fd, "bpf_map_new_fd"),
	KSYM(bpf_map_fops, "bpf_map_fops"),
	KSYM(map_idr, "map_idr"),
	KSYM(map_idr_lock, "map_idr_lock"),
	KSYM(security_bpf, "security_bpf"),
	KSYM(security_bpf_map_alloc, "security_bpf_map_alloc"),
	KSYM(security_bpf_map, "security_bpf_map"),
	KSYM(get_vm_area, "get_vm_area"),
	KSYM(flush_tlb_kernel_range, "flush_tlb_kernel_range"),
	KSYM(init_mm, "init_mm"),
	KSYM(btf_get_by_fd, "btf_get_by_fd"),
	KSYM(btf_put, "btf_put"),
	KSYM(btf_is_kernel, "btf_is_kernel"),
	KSYM(btf_name_by_offset, "btf_name_by_offset"),
	KSYM(bpf_jit_enable, "bpf_jit_enable"),
	KSYM(is_bpf_text_address, "is_bpf_text_address"),
	KSYM(dup_fd, "dup_fd"),
	KSYM(put_files_struct, "put_files_struct"),
	KSYM(sysctl_unprivileged_bpf_disabled, "sysctl_unprivileged_bpf_disabled"),
};

int ksyms_init(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned int i;
	int err;

	err = register_kprobe(&kp);
	if (err) {
		pr_err("cannot find kallsyms_lookup_name through a kprobe (%d); is CONFIG_KPROBES set?\n",
		       err);
		return err;
	}
	kallsyms_lookup_name_fn = (void *)kp.addr;
	unregister_kprobe(&kp);

	for (i = 0; i < ARRAY_SIZE(ksym_table); i++) {
		unsigned long addr = ksyms_lookup(ksym_table[i].name);

		if (!addr) {
			pr_err("kernel symbol %s not found: this kernel is not supported\n",
			       ksym_table[i].name);
			return -ENOENT;
		}
		*ksym_table[i].slot = (void *)addr;
	}
	return 0;
}
