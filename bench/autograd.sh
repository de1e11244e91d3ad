#!/bin/sh
# autograd.sh -- the ratio table of issue 13: per model of the zoo (every
# model file in examples/, tests/data/onnx and tests/data/zoo with a row in
# tests/data/autograd/reference.tsv), the bytes per sample oraclec says
# training saves for backward (`model.saved_bytes_per_sample`: fp32, input
# batch left out), what PyTorch 1.13's autograd saved (the reference, with
# the GPU's 1-byte dropout mask for the CPU's fp32 noise), their ratio, and
# whether the graph is a training graph (as many batchnorm layers as the
# PyTorch model has BatchNorm modules; an eval-mode export folds them).
# Reference models without a file here are listed last.  The same
# comparison, asserted within 3 % on training graphs, is tests/autograd.sh
# in `make check`.
#
# Environment: ORACLEC (default ./oraclec), srcdir (default .).
# Exit status: 0 printed, 1 oraclec failed on a model.
: "${ORACLEC:=./oraclec}" "${srcdir:=.}"
export ORACLEC srcdir
sh "$srcdir/tests/autograd.sh" --table
