# tests/dkms/check-dkms.mk: the end-to-end test of the DKMS product (dkms/) in
# a debootstrapped Debian 12 VM; included by the top-level Makefile.  The
# harness is tests/dkms/check.sh (its environment variables are listed there).
.PHONY: check-dkms
# The .debs of `make deb` (packaging/deb.mk) too, unless CHECK_DKMS_DEB=0.
## check-dkms: install with DKMS and .debs in a Debian 12 VM, reboot, upgrade, remove
check-dkms: dist lib $(if $(filter 0,$(CHECK_DKMS_DEB)),,deb)
	$(TOP)/tests/dkms/check.sh
