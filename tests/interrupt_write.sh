#!/bin/bash
# Interrupts a program while it writes a file: interrupt_write.sh SIGNAL PROGRAM ARGS... runs
# PROGRAM ARGS... --write FILE in a fresh folder, sends SIGNAL once the temporary file beside FILE
# exists, and passes when the program ended by that signal and the folder is empty (no
# .reduce-write-* left, no FILE half made). 77 (skipped) when the program finished before the signal.
set -u
sig=$1
shift
set -m  # job control: a background job keeps SIGINT (a plain script's jobs would ignore it)
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
"$@" --write "$dir/out.txt" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1000); do
  compgen -G "$dir/.reduce-write-*" >/dev/null && break
  sleep 0.01
done
kill -s "$sig" "$pid" 2>/dev/null
wait "$pid"
rc=$?
left=$(ls -A "$dir")
if [ "$rc" -eq 0 ] && [ -f "$dir/out.txt" ]; then echo "finished before SIG$sig: nothing to interrupt"; exit 77; fi
expected=$((128 + $(kill -l "$sig")))
[ "$rc" -eq "$expected" ] || { echo "exit $rc after SIG$sig, not $expected"; exit 1; }
[ -z "$left" ] || { echo "left in the folder after SIG$sig: $left"; exit 1; }
echo "SIG$sig: ended by the signal, nothing left"
