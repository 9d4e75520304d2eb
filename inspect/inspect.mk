# inspect/inspect.mk: the bpf-arena inspector, included by the top-level
# Makefile (TOP, BUILD, CC, WARN, USER_CFLAGS, VERSION are set there).
INSPECT_BIN := $(BUILD)/bin/bpf-arena
INSPECT_SRCS := $(wildcard $(TOP)/inspect/*.c)
INSPECT_HDRS := $(wildcard $(TOP)/inspect/*.h) $(wildcard $(TOP)/uapi/*/*.h)

# The packaging helper installs TOOLS_BINS and TOOLS_MANS in the tools package.
TOOLS_BINS += $(BUILD)/bin/bpf-arena
TOOLS_MANS += $(TOP)/packaging/bpf-arena.1

$(INSPECT_BIN): $(INSPECT_SRCS) $(INSPECT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -std=gnu11 -DBPF_ARENA_VERSION='"$(VERSION)"' -o $@ $(INSPECT_SRCS)

.PHONY: inspect
## inspect: the bpf-arena inspector (build/bin/bpf-arena)
inspect: $(INSPECT_BIN)
# The VM runner stages build/bin: build the inspector with the rest.
userspace: $(INSPECT_BIN)
