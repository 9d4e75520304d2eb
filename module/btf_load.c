// SPDX-License-Identifier: GPL-2.0
/*
 * BPF_BTF_LOAD: `__arg_arena` parameters of global functions.
 *
 * Upstream (6.9+) reads the BTF decl tag "arg:arena" on a global function's
 * parameter and lets an arena pointer (or any scalar) be passed there; the
 * callee starts with an unknown scalar and casts it itself.  6.1 has no
 * argument tags: it types a pointer parameter of a global function as
 * "pointer to memory of the pointee's size", which a lowered arena pointer
 * (a scalar) is not.  So a program BTF that tags a parameter "arg:arena" is
 * loaded with that parameter retyped to a 64-bit integer: 6.1 then gives the
 * callee an unknown scalar and accepts a scalar from the caller, exactly
 * upstream's rule.  The function's prototype is cloned first (prototypes are
 * shared between functions of the same signature), so nothing else changes;
 * type ids stay valid because types are only appended.  Any other BTF (the
 * common case: the string "arg:arena" is not in it) goes to the kernel as it
 * came.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "btf_load.h"
#include "kernel_compat.h"
#include "stock_checks.h"

#define ARG_ARENA_TAG	"arg:arena"
/* The kernel's own limit on BTF blobs (BTF_MAX_SIZE). */
#define BTF_SIZE_MAX	(16 * 1024 * 1024)

struct btf_blob {
	void *data;
	u32 size;
	const struct btf_header *hdr;
	void *types;
	const char *strs;
	u32 *off;		/* type id -> offset in types; id 0 is void */
	u32 nr;			/* types, void included */
};

static u32 btf_type_len(const struct btf_type *t)
{
	u32 vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return sizeof(*t) + sizeof(u32);
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return sizeof(*t);
	case BTF_KIND_ARRAY:
		return sizeof(*t) + sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return sizeof(*t) + vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return sizeof(*t) + vlen * sizeof(struct btf_enum);
	case BTF_KIND_ENUM64:
		return sizeof(*t) + vlen * sizeof(struct btf_enum64);
	case BTF_KIND_FUNC_PROTO:
		return sizeof(*t) + vlen * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return sizeof(*t) + vlen * sizeof(struct btf_var_secinfo);
	default:
		return 0;
	}
}

static struct btf_type *blob_type(const struct btf_blob *b, u32 id)
{
	return id && id < b->nr ? b->types + b->off[id] : NULL;
}

static const char *blob_str(const struct btf_blob *b, u32 off)
{
	return off < b->hdr->str_len ? b->strs + off : NULL;
}

static bool has_arg_arena_tag(const struct btf_blob *b);

/*
 * Indexes the types of a blob that names "arg:arena": 0; -EINVAL if the
 * blob is not one we can safely edit or has nothing to edit (no allocation
 * for those: the kernel judges them as they came); or -ENOMEM.
 */
static int blob_parse(struct btf_blob *b)
{
	const struct btf_header *h = b->data;
	u32 pos, n = 1;

	if (b->size < sizeof(*h) || h->magic != BTF_MAGIC || h->version != BTF_VERSION ||
	    h->hdr_len < sizeof(*h) || h->hdr_len > b->size ||
	    (u64)h->type_off + h->type_len > b->size - h->hdr_len ||
	    (u64)h->str_off + h->str_len > b->size - h->hdr_len ||
	    !h->str_len || (h->type_off | h->type_len) & 3)
		return -EINVAL;
	b->hdr = h;
	b->types = b->data + h->hdr_len + h->type_off;
	b->strs = b->data + h->hdr_len + h->str_off;
	if (b->strs[h->str_len - 1] || !has_arg_arena_tag(b))
		return -EINVAL;
	/* Every type takes at least 12 bytes: size the index from that. */
	b->off = kvcalloc(h->type_len / sizeof(struct btf_type) + 1, sizeof(u32),
			  GFP_KERNEL | __GFP_NOWARN);
	if (!b->off)
		return -ENOMEM;
	for (pos = 0; pos < h->type_len; n++) {
		const struct btf_type *t = b->types + pos;
		u32 len;

		if (h->type_len - pos < sizeof(*t))
			return -EINVAL;
		len = btf_type_len(t);
		if (!len || len > h->type_len - pos)
			return -EINVAL;
		b->off[n] = pos;
		pos += len;
	}
	b->nr = n;
	return 0;
}

static bool has_arg_arena_tag(const struct btf_blob *b)
{
	const char *s = b->strs, *end = b->strs + b->hdr->str_len;

	for (; s < end; s += strlen(s) + 1)
		if (!strcmp(s, ARG_ARENA_TAG))
			return true;
	return false;
}

/* A 64-bit integer type of the blob, or 0. */
static u32 find_u64(const struct btf_blob *b)
{
	u32 id;

	for (id = 1; id < b->nr; id++) {
		const struct btf_type *t = blob_type(b, id);

		if (BTF_INFO_KIND(t->info) == BTF_KIND_INT && t->size == 8 &&
		    BTF_INT_BITS(*(u32 *)(t + 1)) == 64 && !BTF_INT_OFFSET(*(u32 *)(t + 1)))
			return id;
	}
	return 0;
}

/* Is decl tag t "arg:arena" on parameter *arg (< 32) of a FUNC?  Its id. */
static u32 tagged_func(const struct btf_blob *b, const struct btf_type *t, u32 *arg)
{
	const struct btf_type *func, *proto;
	const char *name;
	s32 idx;

	if (BTF_INFO_KIND(t->info) != BTF_KIND_DECL_TAG)
		return 0;
	name = blob_str(b, t->name_off);
	idx = *(s32 *)(t + 1);
	if (!name || strcmp(name, ARG_ARENA_TAG) || idx < 0 || idx >= 32)
		return 0;
	func = blob_type(b, t->type);
	if (!func || BTF_INFO_KIND(func->info) != BTF_KIND_FUNC)
		return 0;
	proto = blob_type(b, func->type);
	if (!proto || BTF_INFO_KIND(proto->info) != BTF_KIND_FUNC_PROTO ||
	    idx >= BTF_INFO_VLEN(proto->info))
		return 0;
	*arg = idx;
	return t->type;
}

struct tagged_func {
	u32 func;	/* FUNC type id */
	u32 args;	/* bit i: parameter i is tagged */
};

/*
 * The retyped blob, NULL when there is nothing to do (or it cannot be
 * edited: the kernel then judges the original), or ERR_PTR(-ENOMEM).
 */
static void *retype_arg_arena(struct btf_blob *b, u32 *new_size)
{
	u32 id, arg, f, nr_funcs = 0, added = 0, u64_id, next_id = b->nr;
	const u32 room = BTF_SIZE_MAX - b->size;	/* blob_parse: size <= max */
	const struct btf_header *h = b->hdr;
	struct tagged_func *funcs;
	struct btf_header *nh;
	void *out = NULL, *types, *end;
	u32 *slot;	/* FUNC id -> its index in funcs + 1: no quadratic search */

	funcs = kvcalloc(b->nr, sizeof(*funcs), GFP_KERNEL | __GFP_NOWARN);
	slot = kvcalloc(b->nr, sizeof(*slot), GFP_KERNEL | __GFP_NOWARN);
	if (!funcs || !slot) {
		out = ERR_PTR(-ENOMEM);
		goto out;
	}
	for (id = 1; id < b->nr; id++) {
		u32 func = tagged_func(b, blob_type(b, id), &arg), len;

		if (!func)
			continue;
		if (!slot[func]) {
			/*
			 * Each clone is up to 12 + 8 * 65535 bytes and a crafted
			 * blob may tag many FUNCs: bound the sum as it grows, so
			 * it can neither wrap nor pass BTF_SIZE_MAX.
			 */
			len = btf_type_len(blob_type(b, blob_type(b, func)->type));
			if (len > room - added)
				goto out;
			added += len;
			funcs[nr_funcs].func = func;
			slot[func] = ++nr_funcs;
		}
		funcs[slot[func] - 1].args |= 1U << arg;
	}
	if (!nr_funcs)
		goto out;
	u64_id = find_u64(b);
	if (!u64_id) {
		if (sizeof(struct btf_type) + sizeof(u32) > room - added)
			goto out;
		added += sizeof(struct btf_type) + sizeof(u32);
	}
	*new_size = sizeof(*nh) + h->type_len + added + h->str_len;
	out = kvzalloc(*new_size, GFP_KERNEL | __GFP_NOWARN);
	if (!out) {
		out = ERR_PTR(-ENOMEM);
		goto out;
	}
	nh = out;
	*nh = *h;
	nh->hdr_len = sizeof(*nh);
	nh->type_off = 0;
	nh->type_len = h->type_len + added;
	nh->str_off = nh->type_len;
	types = out + sizeof(*nh);
	memcpy(types, b->types, h->type_len);
	memcpy(types + nh->str_off, b->strs, h->str_len);
	end = types + h->type_len;
	if (!u64_id) {
		struct btf_type *t = end;

		t->info = BTF_KIND_INT << 24;
		t->size = 8;
		*(u32 *)(t + 1) = 64;	/* unsigned, offset 0, 64 bits */
		end += sizeof(*t) + sizeof(u32);
		u64_id = next_id++;
	}
	for (f = 0; f < nr_funcs; f++) {
		struct btf_type *nfunc = types + b->off[funcs[f].func];
		const struct btf_type *proto = blob_type(b, nfunc->type);
		struct btf_param *params = end + sizeof(struct btf_type);
		u32 len = btf_type_len(proto), i;

		memcpy(end, proto, len);
		for (i = 0; i < BTF_INFO_VLEN(proto->info); i++)
			if (funcs[f].args & (1U << i))
				params[i].type = u64_id;
		nfunc->type = next_id++;
		end += len;
	}
out:
	kvfree(slot);
	kvfree(funcs);
	return out;
}

long arena_btf_load(const struct pt_regs *regs, long (*orig)(const struct pt_regs *regs))
{
	union bpf_attr __user *uattr = (void __user *)regs->si;
	unsigned int size = regs->dx;
	struct btf_blob b = {};
	union bpf_attr attr;
	void *retyped;
	u32 new_size;
	long ret;

	/*
	 * Malformed attrs are the kernel's to reject.  A read of user memory
	 * that faults or an allocation that fails is this call's answer
	 * (EFAULT, ENOMEM, as the stock path gives them), never a pass to the
	 * stock path: that would load an "arg:arena" BTF unedited, and the
	 * program using it would be refused later for an unrelated reason.
	 */
	if (size > PAGE_SIZE)
		return orig(regs);
	if (size > sizeof(attr)) {
		ret = check_zeroed_user((void __user *)uattr + sizeof(attr), size - sizeof(attr));
		if (ret <= 0)
			return ret ? ret : orig(regs);
	}
	memset(&attr, 0, sizeof(attr));
	if (copy_from_user(&attr, uattr, min_t(size_t, size, sizeof(attr))))
		return -EFAULT;
	if (attr.btf_size < sizeof(struct btf_header) || attr.btf_size > BTF_SIZE_MAX)
		return orig(regs);
	/* Permissions before work: no copy or parse for a caller 6.1 refuses. */
	if (stock_btf_load_check(&attr, min_t(size_t, size, sizeof(attr))))
		return orig(regs);
	b.size = attr.btf_size;
	b.data = kvmalloc(b.size, GFP_KERNEL | __GFP_NOWARN);
	if (!b.data)
		return -ENOMEM;
	retyped = NULL;
	ret = copy_from_user(b.data, u64_to_user_ptr(attr.btf), b.size) ? -EFAULT : blob_parse(&b);
	if (!ret)
		retyped = retype_arg_arena(&b, &new_size);
	kvfree(b.off);
	kvfree(b.data);
	if (ret == -EFAULT || ret == -ENOMEM)
		return ret;
	if (IS_ERR(retyped))
		return PTR_ERR(retyped);
	if (!retyped)
		return orig(regs);
	attr.btf = (u64)(unsigned long)retyped;
	attr.btf_size = new_size;
	ret = kern_sys_bpf(BPF_BTF_LOAD, &attr, sizeof(attr));
	kvfree(retyped);
	return ret;
}

/*
 * BTF generated by the module itself (rewrite/loops.c: the FUNC types of the
 * outlined loop bodies), loaded from the kernel buffer blob.  Called inside
 * a program load's fd snapshot: the fd lives in the private table only and
 * is closed when the snapshot is left; the program holds its own reference.
 * The kernel validates the blob like any other (btf_parse()).
 */
int arena_btf_load_generated(void *blob, u32 size)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.btf = (u64)(unsigned long)blob;
	attr.btf_size = size;
	return kern_sys_bpf(BPF_BTF_LOAD, &attr, sizeof(attr));
}
