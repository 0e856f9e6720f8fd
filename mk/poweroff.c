// SPDX-License-Identifier: GPL-2.0
/*
 * Power the test VM off from its init script: the host's poweroff
 * commands talk to an init system the VM does not run.
 */
#include <stdio.h>
#include <unistd.h>
#include <sys/reboot.h>

int main(void)
{
	sync();
	reboot(RB_POWER_OFF);
	perror("reboot");
	return 1;
}
