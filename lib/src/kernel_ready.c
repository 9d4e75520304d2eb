// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Can this kernel give the caller an arena, and if not, what to do: the
 * texts for a missing module and for a device the caller may not open.
 */
#include <grp.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"

/* Whether the bpf_arena module is installed for kernel release rel. */
static bool module_installed(const char *rel)
{
	static const char *const where[] = { "updates/dkms", "updates", "extra" };
	static const char *const ext[] = { "", ".xz", ".zst", ".gz" };
	char path[512];
	size_t i, j;

	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		for (j = 0; j < sizeof(ext) / sizeof(ext[0]); j++) {
			snprintf(path, sizeof(path), "/lib/modules/%s/%s/bpf_arena.ko%s", rel,
				 where[i], ext[j]);
			if (!access(path, F_OK))
				return true;
		}
	}
	return false;
}

bool lbpfa_no_arena_text(char *buf, size_t len)
{
	struct utsname u;

	if (bpf_arena_kernel_has_native() || lbpfa_module_present())
		return false;
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	if (module_installed(u.release))
		snprintf(buf, len, "this kernel (%s) has no BPF arena of its own and the "
			 "bpf_arena module is not loaded: load it as root with `modprobe bpf_arena` "
			 "(/etc/modules-load.d/bpf-arena.conf loads it at boot)", u.release);
	else
		snprintf(buf, len, "this kernel (%s) has no BPF arena of its own and the "
			 "bpf_arena module is not installed for it: install the bpf-arena-dkms "
			 "package (or `dkms install bpf-arena/%s -k %s`, which needs "
			 "linux-headers-%s), then `modprobe bpf_arena`", u.release,
			 BPF_ARENA_LIB_VERSION_STRING, u.release, u.release);
	return true;
}

void lbpfa_dev_access_text(char *buf, size_t len)
{
	struct group *gr = NULL;
	struct stat st;

	if (stat(BPF_ARENA_DEV_PATH, &st)) {
		snprintf(buf, len, "ask the administrator to allow it");
		return;
	}
	if (st.st_gid)
		gr = getgrgid(st.st_gid);
	if (gr && (st.st_mode & 0060) == 0060)
		snprintf(buf, len, "it is mode %04o, group '%s': add the user to that group "
			 "(`adduser USER %s`, then log in again)", st.st_mode & 07777,
			 gr->gr_name, gr->gr_name);
	else
		snprintf(buf, len, "it is mode %04o, owner root%s%s: an administrator lets a group "
			 "use it with a udev rule, /etc/udev/rules.d/60-bpf-arena.rules (an "
			 "example is in /usr/share/doc/bpf-arena-dkms/examples/)",
			 st.st_mode & 07777, gr ? ", group " : "", gr ? gr->gr_name : "");
}

BA_API int bpf_arena_kernel_ready(void)
{
	char text[BA_HINT_LEN];

	if (!lbpfa_no_arena_text(text, sizeof(text)))
		return 0;
	pr_warn("%s\n", text);
	return lbpfa_err(-EOPNOTSUPP);
}
