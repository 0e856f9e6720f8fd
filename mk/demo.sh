#!/bin/bash
# The interim main job: boot the test kernel and show sframe_register(2)
# at work (mk/demo/register.c).  The profiling demo replaces it when the
# unwinder and the perf support land.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kout=${KOUT:-$build/kbuild}
mkdir -p "$build/demo"
bin=$build/demo/register
gcc -O2 -Wall -Wextra -Wa,--gsframe -isystem "$kout/usr/include" \
	-o "$bin" "$top/mk/demo/register.c"
VM_LOG=$build/logs/demo-console.log "$top/mk/vm.sh" "$bin" |
	sed -n '/^guest-init: running/,/^guest-init: command exited/p' |
	sed '1d;$d'
echo "demo: done; the console log is in $build/logs/demo-console.log"
