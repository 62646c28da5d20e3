"""The scheduler from Python: tasks by capability, a gang in the NVLink clique, an actor, a queue.

    ACCEL_BACKENDS=sim ACCEL_SIM_PROFILE=h100-sxm-8 python scheduling.py

Needs at least one GPU (eight simulated H100s above). Exits 0 when every step gave what it should, 1 otherwise.
"""

import sys

import accel


@accel.task(devices=1, share=0.25, selector="kind == gpu && mem >= 40GiB")
def quarter(ctx, i):
    # ctx (the first parameter is named ctx): the devices this task got and its share of their memory.
    device = ctx.devices[0]
    scratch = accel.zeros(1 << 20, "uint8", device=device)  # counts against the task's share
    return i, device.index, ctx.memory_limit(0), scratch.nbytes


@accel.actor(devices=1, share=0.5)
class Counter:
    def __init__(self):
        self.total = 0

    def add(self, x):
        self.total += x
        return self.total


def main():
    ok = True
    with accel.Runtime() as rt:
        # Four quarter-device tasks, placed by capability.
        for i, device, limit, used in (f.result() for f in [quarter.remote(i) for i in range(4)]):
            print(f"task {i}: device {device}, may allocate {limit / (1 << 30):.1f} GiB, allocated {used} bytes")

        # A gang of eight whole devices inside one NVLink clique; a task runs in bundle 0.
        gpus = sum(1 for d in rt.devices() if d["device"].kind == "gpu")
        bundles = [{"devices": 1, "selector": "kind == gpu"}] * gpus
        with rt.placement_group(bundles, strategy="STRICT_PACK", level="clique", name="gang") as pg:
            ranks = [d["rank"] for d in pg.devices()]
            print(f"gang of {gpus}: ranks {ranks}")
            ok &= ranks == list(range(gpus))
            waiting = quarter.remote(99)  # no room while the gang holds every GPU: it says why
            print(f"waiting task: {waiting.message}")
            print(f"in bundle 0: device {rt.submit(lambda ctx: ctx.devices[0].index, placement_group=pg).result()}")
        ok &= waiting.result()[0] == 99

        # An actor keeps its state; its calls run one at a time, in order.
        counter = Counter.remote()
        totals = [f.result() for f in [counter.add.remote(x) for x in range(1, 11)]]
        print(f"actor totals: {totals}")
        ok &= totals[-1] == 55

        # A queue with a quota; its usage counts what finished.
        team = rt.queue("team", quota=2.0)
        for f in [rt.submit(quarter, i, queue=team) for i in range(6)]:
            f.result()
        print(f"queue 'team': {team.usage()['finished']} finished")
        ok &= team.usage()["finished"] == 6

        # A task's exception comes back as accel.TaskError with its message.
        try:
            rt.submit(lambda: 1 / 0).result()
            ok = False
        except accel.TaskError as e:
            print(f"failed task: {e}")
        print(f"counters: {rt.counters()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
