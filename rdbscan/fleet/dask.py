"""`rdbscan load --dask SCHEDULER ... --parquet DIR` (docs/fleet.md): one task per dump on a Dask
cluster the user already runs (`dask.distributed`, the `rdbscan[dask]` extra).

Each task runs rdbscan.fleet.load.stage_dump on a worker: it reads its dump (a path the workers
see, or an s3:// / gs:// / https:// URL) and writes its files straight into the dump's
partitions, so no key row crosses the network to the client; the client gets back the
DumpResult and the dump's `dumps` file, and commits in the order of the paths.  Dask re-runs a task that raised or whose worker died
(`retries`); after that the task's error is the dump's error.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any


def run_tasks(
    fn: Callable,
    tasks: list[tuple],
    scheduler: Any,
    *,
    retries: int = 1,
    on_done: Callable[[int, tuple], None] | None = None,
) -> list[tuple]:
    """Run fn(path, root, dump_id, options) for each task (load.stage_dump) on the cluster at
    `scheduler` (an address, or a dask.distributed Client); the outcomes in task order:
    stage_dump's tuple, or ("error", text) for a task that failed after its retries.
    on_done(index, outcome) is called as each task ends, in the order they end."""
    from dask.distributed import Client, as_completed

    own = not isinstance(scheduler, Client)
    client = Client(scheduler) if own else scheduler
    run = uuid.uuid4().hex[:8]
    try:
        futures = [
            client.submit(
                fn,
                path,
                root,
                dump_id,
                options,
                key=f"rdbscan-load-{run}-{dump_id}",
                retries=retries,
                pure=False,
            )
            for path, root, dump_id, options in tasks
        ]
        index = {f.key: i for i, f in enumerate(futures)}
        out: list[tuple] = [("error", "not run")] * len(tasks)
        for future in as_completed(futures):
            i = index[future.key]
            if future.status == "finished":
                out[i] = future.result()
            else:
                exc = future.exception()
                out[i] = (
                    "error",
                    f"the task failed after {retries} retries: {type(exc).__name__}: {exc}",
                )
            future.release()
            if on_done is not None:
                on_done(i, out[i])
        return out
    finally:
        if own:
            client.close()
