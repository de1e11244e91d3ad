#!/usr/bin/env python3
"""host_costs.py -- what the CPU spends issuing a training step's operators,
measured with the real PyTorch on this machine's CPU (Debian's torch 1.13).

The host lane (model/host.c, docs/model.md "The host lane") charges each
operator the implementation's `dispatch`, each cuDNN call its
`library_call`, and the optimizer's step its Python work per parameter
tensor (`step_tensor`): torch.optim gathers every parameter's gradient and
state in a Python loop before its foreach calls.  This script measures the
last on the CPU: an SGD step with momentum over N one-element parameters
(foreach=True), less the same three foreach calls made directly, per
tensor; and zero_grad(set_to_none=True), another Python loop over the
tensors, per tensor.  It prints one line per N and the medians.

    /usr/bin/python3 tools/host_costs.py > tests/data/host/host_costs.txt
"""
import platform
import statistics
import time

import torch


def mean_time(fn, n):
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def step_tensor(N, rounds=15, n=100):
    """Seconds per tensor: the median over rounds of the step's time less
    its foreach calls' time, measured back to back (other work on the
    machine slows both alike)."""
    ps = [torch.nn.Parameter(torch.randn(1)) for _ in range(N)]
    for p in ps:
        p.grad = torch.randn(1)
    opt = torch.optim.SGD(ps, lr=0.01, momentum=0.9, foreach=True)
    opt.step()
    bufs = [opt.state[p]["momentum_buffer"] for p in ps]
    grads = [p.grad for p in ps]

    def direct():
        with torch.no_grad():
            torch._foreach_mul_(bufs, 0.9)
            torch._foreach_add_(bufs, grads, alpha=1)
            torch._foreach_add_(ps, bufs, alpha=-0.01)
    for _ in range(20):
        opt.step()
        direct()
    return statistics.median(mean_time(opt.step, n) - mean_time(direct, n)
                             for _ in range(rounds)) / N


def zero_grad_tensor(N, rounds=15, n=100):
    """Seconds per tensor of zero_grad(set_to_none=True): a Python loop
    over the parameters, each gradient dropped (the gradients put back
    between calls, outside the timing)."""
    ps = [torch.nn.Parameter(torch.randn(1)) for _ in range(N)]
    opt = torch.optim.SGD(ps, lr=0.01, momentum=0.9, foreach=True)
    grads = [torch.randn(1) for _ in ps]

    def once():
        for p, g in zip(ps, grads):
            p.grad = g
        t = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        return time.perf_counter() - t
    return statistics.median(statistics.median(once() for _ in range(n))
                             for _ in range(rounds)) / N


def main():
    torch.set_num_threads(1)
    print("# torch %s, python %s, %s" % (torch.__version__, platform.python_version(),
                                         platform.processor() or platform.machine()))
    got = []
    for N in (64, 161, 322, 644):
        s = step_tensor(N)
        got.append(s)
        print("step_tensor N=%d %.3f us" % (N, s * 1e6))
    print("step_tensor median %.3f us" % (statistics.median(got) * 1e6))
    got = []
    for N in (64, 161, 322, 644):
        s = zero_grad_tensor(N)
        got.append(s)
        print("zero_grad_tensor N=%d %.3f us" % (N, s * 1e6))
    print("zero_grad_tensor median %.3f us" % (statistics.median(got) * 1e6))


if __name__ == "__main__":
    main()
