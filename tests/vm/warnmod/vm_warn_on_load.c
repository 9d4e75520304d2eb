// SPDX-License-Identifier: GPL-2.0
/* Test-only: WARNs once on load so the VM runner's dmesg check can be tested. */
#include <linux/module.h>
#include <linux/bug.h>

static int __init vm_warn_on_load_init(void)
{
	WARN(1, "vm_warn_on_load: deliberate warning for the VM runner self-test\n");
	return 0;
}

static void __exit vm_warn_on_load_exit(void)
{
}

module_init(vm_warn_on_load_init);
module_exit(vm_warn_on_load_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("VM runner self-test: WARN on load");
