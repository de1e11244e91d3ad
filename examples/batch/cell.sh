#!/bin/sh
# cell.sh -- one task of the batch analysis's Slurm job array (make slurm):
# makes the report or page on line $SLURM_ARRAY_TASK_ID of $OUT/cells.txt
# (OUT=DIR among the variables, else out) with the Makefile and variables
# it is given.
#
#   sbatch --array=1-N cell.sh -f /path/to/Makefile VAR=VALUE ...
set -eu
[ -n "${SLURM_ARRAY_TASK_ID:-}" ] || { echo "cell.sh: run it as a Slurm array task" >&2; exit 2; }
out=out
for arg; do
	case $arg in OUT=*) out=${arg#OUT=} ;; esac
done
cell=$(sed -n "${SLURM_ARRAY_TASK_ID}p" "$out/cells.txt")
[ -n "$cell" ] || { echo "cell.sh: no line $SLURM_ARRAY_TASK_ID in $out/cells.txt" >&2; exit 2; }
exec "${MAKE:-make}" "$@" "$cell"
