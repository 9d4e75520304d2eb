# libbpfarena build rules, included by the top-level Makefile.
# Defines LIB_A, LIB_SO, LIB_PC and the `lib` target.
LIB_SRCS := $(wildcard $(TOP)/lib/src/*.c)
LIB_OBJS := $(patsubst $(TOP)/lib/src/%.c,$(BUILD)/lib/obj/%.o,$(LIB_SRCS))
LIB_A := $(BUILD)/lib/libbpfarena.a
LIB_SONAME := libbpfarena.so.0
LIB_SO := $(BUILD)/lib/$(LIB_SONAME)
LIB_PC := $(BUILD)/lib/libbpfarena.pc
# bpf_object.c (bpf_arena_object_*, header bpf_arena_libbpf.h) uses libbpf:
# the shared library needs it; static users link -lbpf themselves (the .pc
# says Requires.private: libbpf).  Users of the static archive that do not
# call bpf_arena_object_*() do not pull bpf_object.o in and need no -lbpf.
LIB_LDLIBS := -lbpf -lpthread
LIB_CFLAGS := -O2 -g $(WARN) -std=c11 -D_GNU_SOURCE -fPIC -fvisibility=hidden \
	-I$(TOP)/uapi -I$(TOP)/lib/include -I$(TOP)/lib/src

.PHONY: lib
## lib: libbpfarena (static, shared, pkg-config file) in build/lib
lib: $(LIB_A) $(LIB_SO) $(LIB_PC)

$(BUILD)/lib/obj/%.o: $(TOP)/lib/src/%.c $(wildcard $(TOP)/lib/include/*.h $(TOP)/lib/src/*.h $(TOP)/uapi/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIB_SO): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,$(LIB_SONAME) -o $@ $^ $(LIB_LDLIBS)
	ln -sf $(LIB_SONAME) $(BUILD)/lib/libbpfarena.so

$(LIB_PC): $(TOP)/lib/libbpfarena.pc.in $(TOP)/VERSION
	@mkdir -p $(dir $@)
	sed -e 's|@VERSION@|$(VERSION)|' -e 's|@PREFIX@|$(or $(PREFIX),/usr/local)|' $< > $@
