"""Nested containers (`nested`): the measured containers are started by a Docker engine that
runs inside a parent container, one parent per run (paper 001's "nested containers").

The parent (containers/nested-parent: the base image plus Debian's docker.io) is started by the
host's Docker with what worked on these machines, where `--privileged` fails: every capability
but CAP_SYS_RESOURCE, seccomp, AppArmor and system paths unconfined, the host's cgroup
namespace with /sys/fs/cgroup mounted read-write, and an inner `dockerd --iptables=false`
(its storage driver: an option below). The exact flags go into meta.json and the report. The
children's cgroups hang under /interference-nested/<parent> in the host's hierarchy, so their
limits are real host cgroups and whatever a crash leaves is found.

The child image reaches the parent in one of paper 001's two ways (option child_image):
`load`, `docker save` on the host piped into `docker load` in the parent at every run (timed);
or `preloaded`, an engine data root made once per image at build time and mounted read-only
into every parent, under an overlay with a tmpfs for the parent's writes (with the inner vfs
driver, as overlay2 refuses to run on an overlay). With `load`, the inner data root is an
anonymous volume on the host's disk, where the inner overlay2 driver works.

Every child command is the Docker CLI inside the parent (`docker exec PARENT docker ...`):
the shared CLI code (oci_cli.py) runs with those words in front.

The parent container itself (its flags and image, the engine inside it, the pre-loaded data
roots, its removal) is runtimes/nested_parent.py; this module is the adapter."""

from __future__ import annotations

import json
import time
from pathlib import Path

from interference.runtimes import ovs
from interference.runtimes.base import LIMIT_KINDS, LOOPBACK, NETWORK_MODES, Capabilities, RuntimeUnavailable
from interference.runtimes.bridges import Bridges
from interference.runtimes.docker import DockerRuntime
from interference.runtimes.nested_parent import CGROUP_PARENT, PARENT_CONTEXT, NestedParents, parent_flags
from interference.runtimes.oci_cli import OciCliRuntime


class NestedRuntime(NestedParents, OciCliRuntime):
    name = "nested"
    description = "Docker in a Docker parent container (one parent per run)"
    entity = "nested"
    report_order = 40
    binary = "docker"
    engine_name = "Docker (inside the parent container)"
    capabilities = Capabilities(
        networks=True,
        volumes=True,
        limits=frozenset(LIMIT_KINDS),
        image_format="docker image, loaded into the parent's engine",
        image_from="docker",
        # PARENT+CHILD (paper 001, Table III); no OVS child: the paper could not either, and a veth
        # into a child would have to be made inside the parent.
        network_modes=frozenset(f"{p}+{c}" for p in NETWORK_MODES for c in ("host", "bridge")),
    )
    build_inputs = ("containers/nested-parent/Dockerfile", "containers/nested-parent/parent-entrypoint")
    options_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "child_image": {
                "enum": ["load", "preloaded"],
                "default": "load",
                "description": "docker save|load at every run, or a read-only pre-loaded data root",
            },
            "storage_driver": {
                "enum": ["overlay2", "vfs"],
                "default": "overlay2",
                "description": "the inner engine's; its data root is a volume (ext4 here), not the "
                "parent's overlay, so overlay2 works; vfs copies the whole image for each child",
            },
            "preloaded_dir": {"type": "string", "default": "/var/lib/interference/nested"},
        },
    }

    def __init__(self, **options):
        o = {k: v["default"] for k, v in self.options_schema["properties"].items()} | options
        super().__init__(**o)
        self.settings = o
        self.outer = DockerRuntime()
        self.parent: str | None = None
        self.parent_mode: str | None = None  # the parent's part of the run's network mode
        # A parent on the host's network gets a bridge of its own for its children: its engine
        # would otherwise take the host engine's docker0.
        self.bridges = Bridges(Path(o["preloaded_dir"]) / "parents")
        self.how_to_get = self.outer.how_to_get

    # -- itself ----------------------------------------------------------------------------
    def check(self) -> None:
        if self.settings["child_image"] == "preloaded" and self.settings["storage_driver"] != "vfs":
            # The pre-loaded root is the lower layer of an overlay, and overlay2 refuses to work on
            # an overlay file system: vfs is the driver that does.
            raise RuntimeUnavailable(
                "nested: child_image preloaded needs storage_driver vfs (overlay2 cannot run on the "
                "overlay that puts the read-only pre-loaded data root under the parent's writes)"
            )
        self.outer.check()

    def describe(self) -> dict:
        d = self.outer.describe()
        o = self.settings
        return {
            **d,
            "runtime": self.name,
            "engine": "Docker in a Docker parent container",
            "storage_driver": f"{o['storage_driver']} (inner), {d.get('storage_driver')} (parent)",
            "details": {
                "parent container flags": " ".join(parent_flags()),
                "inner engine": f"dockerd --storage-driver={o['storage_driver']} --iptables=false "
                f"--cgroup-parent=/{CGROUP_PARENT}/<parent>",
                "child image": "docker save | docker load into every parent"
                if o["child_image"] == "load"
                else "pre-loaded data root, mounted read-only",
                "parents": "one per run (its members and servers are its children)",
            },
        }

    # -- images: the child image, tagged once its parent image (and data root) is made --------
    @staticmethod
    def _tag(ref: str) -> str:
        # Docker's own image has the same ref: this tag says the conversion (parent image,
        # pre-loaded root) was done.
        return ref.replace("interference/", "interference/nested-child-", 1)

    def image_id(self, ref: str) -> str | None:
        return self.outer.image_id(self._tag(ref))

    def convert(self, source: dict, ref: str, log: Path) -> str:
        if not source.get("base"):
            raise RuntimeError(
                f"{source['ref']} has no base.json beside it: the parent image is built on base"
            )
        parent = self.parent_ref(source["base"])
        if self.outer.image_id(parent) is None:
            args = {"BASE_IMAGE": source["base"]["ref"]}
            self.outer.build(PARENT_CONTEXT, PARENT_CONTEXT / "Dockerfile", parent, args, {}, log)
        if self.settings["child_image"] == "preloaded":
            self._make_preloaded(source["id"], parent, log)
        # The child image is Docker's own; the tag records that it was made for this runtime.
        self.outer._cli("tag", source["id"], self._tag(ref))
        return source["id"]

    def tool_versions(self, ref: str) -> dict:
        return self.outer.tool_versions(self._tag(ref))

    # -- the parent of a run -----------------------------------------------------------------
    def prepare(self, images: dict) -> None:
        if self.settings["child_image"] == "preloaded":
            for info in images.values():
                self._make_preloaded(info["id"], self._parent_image(), Path("/dev/null"))

    def open_run(
        self,
        outdir: Path,
        labels: dict,
        images: dict,
        name: str | None = None,
        network_mode: str | None = None,
    ) -> dict:
        """Start the run's parent (on the parent's part of network_mode), wait for its engine,
        and give it the run's images."""
        name = name or f"interference-nested-{labels['interference.run']}"
        storage = self.settings["storage_driver"]
        parent_image = self._parent_image()
        argv = ["run", "--detach", "--name", name, *[f"--label={k}={v}" for k, v in labels.items()]]
        argv += parent_flags()
        self.parent_mode = network_mode.split("+")[0] if network_mode else None
        inner_bridge = []
        if self.parent_mode == "host":
            argv += ["--network", "host"]
            inner_bridge = [self.bridges.create(name, labels, gateway=True)["bridge"]]
        elif self.parent_mode == "ovs":
            argv += ["--network", "none"]  # its veth from the OVS bridge comes after the start
        argv += ["--volume", f"{outdir.resolve()}:{outdir.resolve()}"]  # the children's bind mounts
        preloaded = self.settings["child_image"] == "preloaded"
        if preloaded:
            roots = {self._preloaded(i["id"]) for i in images.values()}
            if len(roots) != 1:
                raise RuntimeError("a pre-loaded parent holds one data root; this run needs several images")
            argv += ["--volume", f"{roots.pop()}:/preloaded:ro"]
        else:
            argv += ["--volume", "/var/lib/docker"]  # an anonymous volume: not the parent's overlay
        t0 = time.time()
        self.outer._cli(*argv, parent_image, f"/{CGROUP_PARENT}/{name}", storage, *inner_bridge)
        created = time.time() - t0
        self.parent = name
        self.run_id = labels[ovs.RUN_LABEL]
        if self.parent_mode == "ovs":
            pid = int(self.outer._cli("inspect", "--format", "{{.State.Pid}}", name).stdout)
            ovs.OvsSwitch(self.run_id).attach_netns(name, pid)
        self.global_args = ("exec", "-i", name, "docker")
        engine = self._wait_for_engine(name)
        if self.parent_mode in ("bridge", "ovs"):
            self._masquerade_children(name)
        loads = {}
        for image, info in ({} if preloaded else images).items():
            t1 = time.time()
            self._load(name, info["id"])
            loads[image] = round(time.time() - t1, 3)
        inner = json.loads(self._cli("info", "--format", "{{json .}}").stdout)
        return {
            "parent": name,
            "parent_image": parent_image,
            "parent_argv": ["docker", *argv, parent_image],
            "parent_create_s": round(created, 3),
            "inner_engine_ready_s": round(engine, 3),
            "child_image": self.settings["child_image"],
            "child_image_load_s": loads,
            "parent_network": self.parent_mode,
            "inner_engine": {
                k: inner.get(k) for k in ("ServerVersion", "Driver", "CgroupDriver", "CgroupVersion")
            },
        }

    # -- network modes: children reach the host; the host reaches no child (inside the parent) --
    def entity_pid(self, name: str) -> int | None:
        # The inner engine's pids are the parent's namespace's, not this machine's: the child's
        # telemetry is the host's alone.
        return None

    def own_mode(self, network_mode: str) -> str:
        return network_mode.split("+")[1]

    def host_address(self, name: str) -> str:
        child = self.attached[name][0]
        if self.parent_mode == "ovs":
            return ovs.OvsSwitch(self.run_id).gateway()
        if self.parent_mode == "host":
            return LOOPBACK if child == "host" else self.bridges.gateway(self.parent)
        return self.outer._bridge_addresses(self.parent)[1]  # the host's docker0, by NAT if bridged

    def entity_address(self, name: str) -> str:
        raise NotImplementedError(
            "nested: the host does not reach a child's server (its bridge is inside the parent); "
            "the network study measures nested children as clients of the host"
        )

    # -- the end of a run, and what a crash left ----------------------------------------------
    def close_run(self) -> None:
        if self.parent:
            self._remove_parents([self.parent])
            if self.bridges.exists(self.parent):
                self.bridges.remove(self.parent)
            self.parent = None

    def remove_labelled(self, label: str, value: str) -> list[str]:
        parents = self.outer._cli("ps", "-aq", "--filter", f"label={label}={value}").stdout.split()
        self.parent = None
        removed = self._remove_parents(parents)
        for network in self.bridges.labelled(label, value):
            self.bridges.remove(network)
            removed.append(f"bridge {network}")
        return removed + ovs.remove_labelled(label, value)
