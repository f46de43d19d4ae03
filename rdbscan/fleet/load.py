"""`rdbscan load DUMP... --parquet DIR` (docs/fleet.md): dumps into a Parquet dataset, one at a
time, several at once in worker processes (`--jobs`), or one task per dump on a Dask cluster
(`--dask SCHEDULER`).

The process that runs this holds the dataset's lock, gives out the dump ids (in the order of the
paths, as a sequential load does) and is the one that publishes: a worker or a Dask task parses
its dump straight into the dump's partitions and returns its DumpResult with the bytes of its
`dumps` file, which is not written yet (the commit mark, rdbscan/db/parquet.py); here, in the
order of the paths, as soon as the dumps before it have ended, a dump whose fingerprint the
dataset already holds is refused and its files removed (or it replaces the old one with
existing='replace'), the others are committed by writing their `dumps` file: Ctrl-C keeps
every dump committed before it.  A task that fails (a worker lost, an exception) is retried by
Dask (`retries`), and after that reported as that dump's error (exit 6), its files removed; with
`--jobs` a lost worker is replaced and its dump reported so: no dump goes missing without a
line that says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..db.load import DumpResult, already_loaded, load_one, snapshot_ids
from ..db.parquet import Dataset, ParquetStore, partition_path


def load_dataset(
    paths: Sequence[str],
    root: str,
    *,
    jobs: int = 1,
    scheduler: Any = None,
    retries: int = 1,
    existing: str = "refuse",
    instance: str | None = None,
    snapshot_sizes: list[int] | None = None,
    on_result: Callable[[DumpResult], None] | None = None,
    on_task: Callable[[str, int, int, tuple], None] | None = None,
    **options: Any,
) -> list[DumpResult]:
    """Load `paths` into the dataset at `root` (a directory or an object-store URL; created if
    needed).  jobs > 1: that many worker processes; scheduler: a Dask scheduler's address (or a
    dask.distributed Client) to run one task per dump on.  `options` are load_one's (progress,
    verify_crc, target, skip_bad, allow_ratio).  on_result(result) is called for each dump as it
    is settled (in the order of `paths`); with workers, on_task(path, done, total, outcome) as
    each worker's task ends (outcome: stage_dump's, or ("error", text))."""
    paths = list(paths)
    if scheduler is None and (jobs <= 1 or len(paths) <= 1):
        return _load_here(paths, root, existing, instance, snapshot_sizes, on_result, options)
    options.pop("progress", None)  # no progress line from workers
    store = ParquetStore(root)
    first = 0
    tasks: list[tuple] = []
    try:
        first = store.allocate_dump_ids(len(paths))
        ids = snapshot_ids(first, len(paths), snapshot_sizes)
        tasks = [
            (p, root, first + i, {**options, "instance": instance, "snapshot_id": ids[i]})
            for i, p in enumerate(paths)
        ]
        outcomes: list[tuple | None] = [None] * len(tasks)
        results: list[DumpResult] = []
        done = [0]

        def ended(i: int, outcome: tuple) -> None:
            outcomes[i] = outcome
            done[0] += 1
            if on_task is not None:
                on_task(tasks[i][0], done[0], len(tasks), outcome)
            # Settled (committed, or refused as a dump the dataset holds) in the order of the
            # paths, as soon as the dumps before it are: the same dumps win as in a load one at
            # a time, and Ctrl-C keeps every dump committed before it.
            while len(results) < len(tasks):
                k, ready = len(results), outcomes[len(results)]
                if ready is None:
                    break
                path, _, dump_id, _ = tasks[k]
                results.append(_settle(store.dataset, path, dump_id, ready, existing))
                outcomes[k] = ("settled",)  # its bytes are not kept
                if on_result is not None:
                    on_result(results[k])

        if scheduler is not None:
            from .dask import run_tasks

            run_tasks(stage_dump, tasks, scheduler, retries=retries, on_done=ended)
        else:
            _run_processes(tasks, jobs, on_done=ended)
        assert len(results) == len(tasks)
        return results
    finally:
        # what a failed task, or this load interrupted, left of dumps not committed
        if first:
            committed = {r["dump_id"] for r in store.dataset.dumps(reread=True)}
            for _, _, dump_id, opts in tasks:
                if dump_id not in committed:
                    store.dataset.remove_partitions(
                        partition_path(opts["instance"], opts["snapshot_id"], dump_id)
                    )
        store.close()


def _load_here(paths, root, existing, instance, snapshot_sizes, on_result, options):
    store = ParquetStore(root)
    try:
        first = store.allocate_dump_ids(len(paths))
        ids = snapshot_ids(first, len(paths), snapshot_sizes)
        results = []
        for i, p in enumerate(paths):
            store.plan(first + i, instance, ids[i])
            r = load_one(
                store,
                p,
                dump_id=first + i,
                existing=existing,
                instance=instance,
                snapshot_id=ids[i],
                **options,
            )
            if on_result is not None:
                on_result(r)
            results.append(r)
        return results
    finally:
        store.close()


def stage_dump(path: str, root: str, dump_id: int, options: dict) -> tuple:
    """One dump parsed into its partitions of the dataset (a worker's or a Dask task's work):
    ("ok", DumpResult, (partition, bytes of its `dumps` file) or None) -- None when nothing was
    committed (an input that could not be opened)."""
    store = ParquetStore(root, publish=False)
    try:
        store.plan(dump_id, options.get("instance"), options.get("snapshot_id"))
        result = load_one(store, path, dump_id=dump_id, existing="replace", **options)
    finally:
        store.close()
    result.for_another_process()
    return ("ok", result, store.staged.get(dump_id))


def _settle(dataset: Dataset, path: str, dump_id: int, outcome: tuple, existing: str) -> DumpResult:
    """Commit a staged dump (its `dumps` file), or refuse it when the dataset holds it already
    (its files removed); a failed task becomes the dump's error."""
    if outcome[0] != "ok":
        return DumpResult(
            dump_id=dump_id,
            path=path,
            complete=False,
            keys=0,
            error=f"{path}: not loaded: {outcome[1]}",
            error_kind="io",
        )
    result, staged = outcome[1], outcome[2]
    if staged is None:
        return result
    partition, dumps_file = staged
    fp = result.fingerprint
    same = _find(dataset, fp) if fp else None
    if same is not None and existing != "replace":
        dataset.remove_partitions(partition)
        store_like = _Named(dataset.path)
        return already_loaded(store_like, same, path, fp, existing)  # type: ignore[arg-type]
    dataset.publish(partition, dumps_file, [same["dump_id"]] if same is not None else [])
    return result


def _find(dataset: Dataset, fingerprint: str) -> dict | None:
    for row in dataset.dumps():
        if row.get("fingerprint") == fingerprint:
            return row
    return None


class _Named:
    """What already_loaded reads of a store: its path."""

    def __init__(self, path: str):
        self.path = path


def _run_processes(tasks: list, jobs: int, on_done: Callable[[int, tuple], None]) -> None:
    """Run stage_dump for each task in up to `jobs` worker processes (the pool of `load --jobs`,
    rdbscan/db/parallel.py: Ctrl-C kills them at once, they die with this process);
    on_done(index, outcome) as each ends.  A task's exception, or its worker's death, is the
    dump's error (the worker is replaced): the other dumps go on."""
    from ..db.parallel import run_pool

    def task(i: int) -> tuple:
        return (stage_or_error, tasks[i])

    run_pool(
        jobs,
        list(range(len(tasks))),
        task,
        on_done,
        [t[0] for t in tasks],
        lost=lambda i, why: on_done(i, ("error", why)),
    )


def stage_or_error(path: str, root: str, dump_id: int, options: dict) -> tuple:
    """stage_dump, with an exception turned into the dump's outcome ("error", text)."""
    try:
        return stage_dump(path, root, dump_id, options)
    except Exception as e:  # noqa: BLE001 - reported as the dump's error
        return ("error", f"{type(e).__name__}: {e}")
