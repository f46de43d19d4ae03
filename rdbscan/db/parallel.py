"""`rdbscan load --jobs N`: several dumps at once, each parsed by a worker process into a
database of its own, then copied into the target database by the parent.

What it promises (and tests/test_cli_faults.py checks with real signals):
- a dump is copied as soon as its worker finishes (in one transaction: its key rows and its
  `dumps` row commit together or not at all), so Ctrl-C keeps every dump finished before it;
- Ctrl-C ends the load at once: workers ignore SIGINT (the terminal sends it to the whole
  process group) and the parent kills them;
- workers die with the parent, also after kill -9 (Linux: PR_SET_PDEATHSIG; elsewhere a
  thread that watches the parent's sentinel);
- the parts directory (`.rdbscan-parts-<pid>-*` beside the database) is removed at the end, and
  one left behind by a killed load is removed by the next load into the same directory.

The pool (run_pool) also runs `load --jobs N --parquet` (rdbscan/fleet/load.py), whose workers
write their dump's partitions of the dataset themselves.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import Any

from .store import DUMP_TABLES, Store

# Tables a worker's database holds for its dump, copied into the target database in this order.
# (with `rdbscan migrate -j`, the projection tables too: DUMP_TABLES, `dumps` last)
PART_TABLES = DUMP_TABLES
PARTS_PREFIX = ".rdbscan-parts-"


def sql_string(text: str) -> str:
    """`text` as an SQL string literal (a path with an apostrophe stays one literal)."""
    return "'" + text.replace("'", "''") + "'"


def load_parallel(
    paths: list[str],
    db_path: str,
    *,
    jobs: int,
    existing: str,
    snapshot_sizes: list[int] | None = None,
    **options,
) -> list:
    """Load `paths` into `db_path` with up to `jobs` worker processes; dump_ids follow the
    order of `paths` as in a sequential load.  Returns one DumpResult per path.  A dump the
    database already holds (or named twice) is settled when its part is copied (`existing` as
    in rdbscan.db.load.load)."""
    from .identity import file_fingerprint
    from .load import already_loaded, snapshot_ids

    store = Store(db_path)
    first = store.allocate_dump_ids(len(paths))
    ids = snapshot_ids(first, len(paths), snapshot_sizes)  # docs/diff.md
    where = os.path.dirname(os.path.abspath(db_path))
    remove_stale_parts(where)
    work = tempfile.mkdtemp(prefix=f"{PARTS_PREFIX}{os.getpid()}-", dir=where)
    try:
        results: list = [None] * len(paths)
        # A file named twice is loaded once, by its first mention, whichever finishes first (its
        # dump_id then follows the order of `paths`, as in a sequential load).
        twins: dict[int, list[int]] = {}
        first_of: dict[str, int] = {}
        todo = []
        for i, path in enumerate(paths):
            same_file = file_fingerprint(path)
            if same_file is not None and same_file in first_of:
                twins.setdefault(first_of[same_file], []).append(i)
                continue
            if same_file is not None:
                first_of[same_file] = i
            todo.append(i)

        def task(i: int) -> tuple:
            part = os.path.join(work, f"part{i}.duckdb")
            return (load_part, (paths[i], part, first + i, {**options, "snapshot_id": ids[i]}))

        def finished(i: int, result) -> None:
            results[i] = result
            part = os.path.join(work, f"part{i}.duckdb")
            fp = result.fingerprint
            same = store.find_dump(fp) if fp else None
            if same is not None and existing != "replace":
                results[i] = already_loaded(store, same, paths[i], fp, existing)
                os.remove(part)
            elif os.path.exists(part):  # else nothing of an RDB was read (a missing file)
                _merge(store, part, replaces=[same["dump_id"]] if same is not None else [])
            for k in twins.pop(i, []):  # the same file named again: settled as a sequential
                loaded = store.find_dump(fp) if fp else None  # load would settle it
                if loaded is not None and existing != "replace":
                    results[k] = already_loaded(store, loaded, paths[k], fp, existing)
                else:
                    todo.append(k)

        run_pool(jobs, todo, task, finished, paths)
    finally:
        store.close()
        shutil.rmtree(work, ignore_errors=True)
    return results


def load_each(pairs: list[tuple[str, str]], *, jobs: int, **options) -> list:
    """Load each (dump, database) pair into a database of its own that does not exist yet (the
    dump gets id 1), up to `jobs` at once in worker processes: nothing is copied, as `diff` of
    two dumps wants it (one database per side).  Returns one DumpResult per pair."""
    results: list = [None] * len(pairs)

    def task(i: int) -> tuple:
        return (load_part, (pairs[i][0], pairs[i][1], 1, {**options, "snapshot_id": 1}))

    def finished(i: int, result) -> None:
        results[i] = result

    run_pool(jobs, list(range(len(pairs))), task, finished, [p for p, _ in pairs])
    return results


def run_pool(
    jobs: int,
    todo: list[int],
    task: Callable[[int], tuple],
    finished: Callable[[int, Any], None],
    paths: list[str],
    lost: Callable[[int, str], None] | None = None,
) -> None:
    """Run the tasks numbered in `todo` on up to `jobs` worker processes: task(i) gives
    (function, args), which a worker calls (a module-level function: it is sent by name);
    finished(i, what it returned) is called as each ends (and may add to `todo`).  An exception
    the function raised is raised here.  A worker that dies (killed, out of memory) raises
    RuntimeError naming paths[i], or, with `lost`, calls lost(i, why) and is replaced by a
    new one.  Ctrl-C or an error kills the workers still loading (the module docstring)."""
    workers: list[_Worker] = []
    busy: dict = {}
    try:
        ctx = multiprocessing.get_context("spawn")  # no fork: DuckDB and the writer thread
        workers = [_Worker(ctx) for _ in range(min(jobs, len(todo)))]
        idle = list(workers)
        while todo or busy:
            while idle and todo:
                w, i = idle.pop(), todo.pop(0)
                w.conn.send(task(i))
                busy[w.conn] = (w, i)
            for conn in multiprocessing.connection.wait(list(busy)):
                w, i = busy.pop(conn)
                try:
                    value = w.result(paths[i])
                except WorkerLost as e:
                    if lost is None:
                        raise
                    w.stop()
                    workers.remove(w)
                    w = _Worker(ctx)
                    workers.append(w)
                    idle.append(w)
                    lost(i, e.why)
                    continue
                idle.append(w)
                finished(i, value)
    finally:
        for w, _ in busy.values():  # Ctrl-C or an error: what is still loading is dropped
            w.process.kill()
        for w in workers:
            w.stop()


class WorkerLost(RuntimeError):
    """A worker process ended while it was loading a dump."""

    def __init__(self, path: str, exitcode: int | None):
        how = f"exit code {exitcode}"
        if exitcode is not None and exitcode < 0:
            try:
                how = f"killed by {signal.Signals(-exitcode).name}"
            except ValueError:
                how = f"killed by signal {-exitcode}"
        self.why = f"the worker process loading it ended unexpectedly ({how})"
        super().__init__(f"{path}: {self.why}")


def _merge(store: Store, part: str, replaces: list[int]) -> None:
    """Copy one finished dump into the target database: all its tables in one transaction,
    which also removes the dumps it replaces (--replace)."""
    store.run(f"ATTACH {sql_string(part)} AS rdbscan_part (READ_ONLY)")
    try:
        store.run("BEGIN TRANSACTION")
        try:
            for dump_id in replaces:
                store._delete(dump_id)
            for table in PART_TABLES:
                store.run(f"INSERT INTO main.{table} BY NAME SELECT * FROM rdbscan_part.{table}")
            store.run("COMMIT")
        except BaseException:
            store.run("ROLLBACK")
            raise
    finally:
        store.run("DETACH rdbscan_part")
    os.remove(part)


def remove_stale_parts(directory: str) -> None:
    """Remove the parts directories of loads whose process is gone (killed with -9)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not name.startswith(PARTS_PREFIX):
            continue
        pid = name[len(PARTS_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(os.path.join(directory, name), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, another user's
        return True
    return True


class _Worker:
    """One worker process and the pipe it takes dumps from and answers on."""

    def __init__(self, ctx):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(
            target=_worker_main, args=(child, os.getpid()), name="rdbscan-load-worker", daemon=True
        )
        # Blocked while the worker starts, so that it inherits the mask: a Ctrl-C before it
        # ignores SIGINT must not print its KeyboardInterrupt (the parent gets it when unblocked)
        block = hasattr(signal, "pthread_sigmask")
        if block:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.process.start()
        finally:
            if block:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        child.close()

    def result(self, path: str):
        """The DumpResult of the dump just loaded; an exception the worker raised is raised
        here (a full disk, a bug)."""
        try:
            kind, value = self.conn.recv()
        except EOFError:
            self.process.join(5)
            raise WorkerLost(path, self.process.exitcode) from None
        if kind == "error":
            raise value
        return value

    def stop(self) -> None:
        """Ask an idle worker to leave; kill one still loading (Ctrl-C, an error elsewhere)."""
        if self.process.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.process.join(0.5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


def load_part(path: str, part_db: str, dump_id: int, options: dict):
    """A worker's task: one dump loaded into a database of its own; its DumpResult."""
    from .load import load_one

    store = Store(part_db)
    make = options.pop("projector", None)  # a picklable factory (rdbscan migrate --jobs)
    try:
        # (a dump the target database holds is settled by the parent)
        result = load_one(
            store,
            path,
            dump_id=dump_id,
            existing="replace",
            projector=make(dump_id) if make is not None else None,
            **options,
        )
    finally:
        store.close()
    result.for_another_process()
    return result


def _worker_main(conn, parent: int) -> None:
    """A worker process: run the (function, args) tasks the parent sends, one at a time;
    answer ("ok", what it returned) or ("error", the exception)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C ends
    _die_with_parent(parent)

    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        fn, args = task
        try:
            conn.send(("ok", fn(*args)))
        except BaseException as e:
            try:
                conn.send(("error", e))
            except Exception:  # not picklable: its text
                conn.send(("error", RuntimeError(f"{type(e).__name__}: {e}")))


def _die_with_parent(parent: int) -> None:
    """End this process when the parent ends, however it ends (kill -9 included)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            PR_SET_PDEATHSIG = 1
            if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0:
                if os.getppid() != parent:  # the parent was gone before prctl
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass
    process = multiprocessing.parent_process()
    assert process is not None  # a worker process
    sentinel = process.sentinel

    def watch():
        multiprocessing.connection.wait([sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="rdbscan-parent-watch", daemon=True).start()
