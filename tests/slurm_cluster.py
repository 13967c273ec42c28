"""A throw-away one-node SLURM cluster (munged, slurmctld, slurmd) for tests.

Everything lives in one temporary folder: the munge key and socket, ``slurm.conf``, state,
spool, logs and PID files; the daemons listen on free ports, so a system SLURM or munge
on the same machine is left alone. Clients find the cluster through ``SLURM_CONF``.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "srun", "squeue", "scancel", "scontrol", "sinfo")
PARTITION = "debug"


def missing_binaries() -> list[str]:
    """The SLURM/munge programs this cluster needs that are not on PATH (or in /usr/sbin)."""
    path = f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin"
    return [name for name in DAEMONS + CLIENTS if shutil.which(name, path=path) is None]


@dataclass
class Cluster:
    """A running cluster: the environment its clients need and its folder (logs inside)."""

    root: Path
    env: dict[str, str]

    def logs(self) -> str:
        """The tail of every daemon log, for a failure message."""
        return "\n".join(
            f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}"
            for log in sorted((self.root / "log").glob("*.log"))
        )


def free_port() -> int:
    """A TCP port on localhost that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def node_hardware() -> str:
    """CPUs, sockets, cores, threads and memory of this machine as ``slurmd -C`` reports them."""
    line = subprocess.run(
        [sbin("slurmd"), "-C"], capture_output=True, text=True, check=True
    ).stdout.splitlines()[0]
    return re.sub(r"^NodeName=\S+\s*", "", line)


def sbin(name: str) -> str:
    """The full path of a daemon (Debian installs them in /usr/sbin)."""
    found = shutil.which(name, path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")
    if found is None:
        raise FileNotFoundError(name)
    return found


def slurm_conf(root: Path, host: str, munge_socket: Path) -> str:
    """A minimal slurm.conf: no accounting, no cgroups (containers often lack them)."""
    return f"""\
ClusterName=tokstudy
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/run/slurmctld.pid
SlurmdPidFile={root}/run/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# finished jobs stay visible to squeue (the executor's status check) for an hour
MinJobAge=3600
ReturnToService=2
SlurmdTimeout=60
NodeName={host} NodeAddr=127.0.0.1 {node_hardware()} State=UNKNOWN
PartitionName={PARTITION} Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def srun_finding_config(folder: Path, conf: Path) -> None:
    """An ``srun`` first on PATH that sets SLURM_CONF and runs the real one.

    snakemake-executor-plugin-slurm-jobstep starts each job's step with ``srun`` after
    removing every ``SLURM_*`` variable, SLURM_CONF included, so a cluster whose slurm.conf
    is not at the default path (/etc/slurm/slurm.conf) needs the path given again.
    """
    real = shutil.which("srun")
    if real is None:
        raise FileNotFoundError("srun")
    folder.mkdir(exist_ok=True)
    shim = folder / "srun"
    shim.write_text(f'#!/bin/sh\nSLURM_CONF={conf} exec {real} "$@"\n', encoding="utf-8")
    shim.chmod(0o755)


def wait_for(what: str, check, cluster: Cluster, timeout: float = 60) -> None:
    """Poll ``check()`` until it is true; fail with the daemon logs after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"SLURM test cluster: {what} not ready\n{cluster.logs()}")
        time.sleep(0.5)


def client(cluster: Cluster, *command: str) -> subprocess.CompletedProcess:
    """Run a SLURM client command against the cluster."""
    return subprocess.run(
        command, capture_output=True, text=True, env=cluster.env, check=False, timeout=30
    )


def node_state(cluster: Cluster) -> str:
    """The node's state as sinfo reports it (``idle`` once slurmd registered)."""
    return client(cluster, "sinfo", "-h", "-N", "-o", "%T").stdout.strip()


@contextmanager
def daemon(command: list[str], log: Path, env: dict[str, str]) -> Iterator[None]:
    """Run a daemon in the foreground for the block; terminate it (then kill) afterwards."""
    with log.open("ab") as stream:
        process = subprocess.Popen(command, stdout=stream, stderr=subprocess.STDOUT, env=env)
    try:
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def cancel_all_jobs(cluster: Cluster) -> None:
    """Cancel every job still known to the cluster (a test that failed half-way)."""
    jobs = client(cluster, "squeue", "-h", "-o", "%i").stdout.split()
    if jobs:
        client(cluster, "scancel", *jobs)


@contextmanager
def one_node_cluster(root: Path) -> Iterator[Cluster]:
    """Start munged, slurmctld and slurmd under ``root``; stop all three on exit."""
    for folder in ("state", "spool", "run", "log", "munge"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "munge").chmod(0o700)
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    munge_socket = root / "munge" / "munge.socket"
    host = socket.gethostname().split(".")[0]
    conf = root / "slurm.conf"
    conf.write_text(slurm_conf(root, host, munge_socket), encoding="utf-8")
    env = {**os.environ, "SLURM_CONF": str(conf), "PATH": f"{root}/bin:{os.environ['PATH']}"}
    cluster = Cluster(root, env)
    srun_finding_config(root / "bin", conf)
    log = root / "log"
    with ExitStack() as stack:
        stack.enter_context(
            daemon(
                [
                    sbin("munged"),
                    "--foreground",
                    "--force",
                    f"--key-file={key}",
                    f"--socket={munge_socket}",
                    f"--pid-file={root}/run/munged.pid",
                    f"--seed-file={root}/munge/munged.seed",
                    f"--log-file={log}/munged.log",
                ],
                log / "munged.out.log",
                cluster.env,
            )
        )
        wait_for("munged", munge_socket.exists, cluster)
        stack.enter_context(
            daemon([sbin("slurmctld"), "-D", "-i"], log / "slurmctld.out.log", cluster.env)
        )
        wait_for(
            "slurmctld",
            lambda: client(cluster, "scontrol", "ping").stdout.count("UP") == 1,
            cluster,
        )
        stack.enter_context(
            daemon([sbin("slurmd"), "-D", "-N", host], log / "slurmd.out.log", cluster.env)
        )
        stack.callback(cancel_all_jobs, cluster)
        wait_for("slurmd", lambda: node_state(cluster) == "idle", cluster)
        yield cluster


def main() -> None:
    """Start a cluster in the folder given (default: a new temporary one) until Ctrl-C."""
    import argparse
    import signal

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, help="where config, state and logs go")
    folder = parser.parse_args().folder or Path(tempfile.mkdtemp(prefix="tokstudy-slurm-"))
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, signal.default_int_handler)
    with one_node_cluster(folder.resolve()) as cluster:
        print(
            f"one-node SLURM cluster up; in another shell:\n"
            f"  export SLURM_CONF={cluster.env['SLURM_CONF']} PATH={folder.resolve()}/bin:$PATH\n"
            f"logs: {folder.resolve()}/log; Ctrl-C stops it",
            flush=True,
        )
        try:
            signal.pause()
        except KeyboardInterrupt:
            print("stopping slurmd, slurmctld, munged", flush=True)


if __name__ == "__main__":
    main()
