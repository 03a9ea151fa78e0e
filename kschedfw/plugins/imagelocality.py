"""ImageLocality: prefer nodes that already have the pod's images (upstream ``imagelocality``).

Each image of the pod (containers, init containers and image volumes) found on the node adds its
size scaled by the share of nodes that have it (``size * nodesWithImage / totalNodes``), which
keeps pods from piling onto the few nodes holding a popular image. The sum is clamped to
``[23 MiB, 1000 MiB * number of containers]`` and mapped linearly onto 0-100. No args, no
normalization.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Any, Mapping

from kschedfw import hookimpl
from kschedfw.fwk.types import MAX_NODE_SCORE, SignFragment

if TYPE_CHECKING:
    from kschedfw.api import Pod
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.status import Status
    from kschedfw.fwk.types import ImageStateSummary, NodeInfo

__all__ = ["ImageLocality", "NAME", "IMAGE_NAMES_SIGNER_NAME", "MB", "MIN_THRESHOLD",
           "MAX_CONTAINER_THRESHOLD", "normalized_image_name", "calculate_priority",
           "scaled_image_score", "sum_image_scores"]

NAME = "ImageLocality"
IMAGE_NAMES_SIGNER_NAME = "v1.Pod.Spec.CanonicalImageNames()"

# Bounds of the image-size range scored; about the 90th percentile of images on Docker Hub.
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """The CRI name of an image: ``:latest`` is added when no tag follows the last ``/``."""
    if name.rfind(":") <= name.rfind("/"):
        name = name + ":latest"
    return name


def _pod_images(pod: Pod) -> tuple[str, ...]:
    """Normalized images in upstream's order: init containers, containers, image volumes."""
    names = [normalized_image_name(c.image) for c in pod.init_containers]
    names.extend(normalized_image_name(c.image) for c in pod.containers)
    for volume in pod.volumes:
        if volume.source == "image":
            names.append(normalized_image_name(str(volume.details.get("reference") or "")))
    return tuple(names)


def scaled_image_score(size: int, num_nodes: int, total_num_nodes: int) -> int:
    """The image size scaled by how far the image has spread over the cluster."""
    spread = float(num_nodes) / float(total_num_nodes)
    return int(float(size) * spread)


def sum_image_scores(image_states: Mapping[str, ImageStateSummary], images: tuple[str, ...],
                     total_num_nodes: int) -> int:
    total = 0
    for image in images:
        state = image_states.get(image)
        if state is not None:
            total += scaled_image_score(state.size, state.num_nodes, total_num_nodes)
    return total


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Map the clamped image score sum linearly onto 0-100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    num = MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD)
    den = max_threshold - MIN_THRESHOLD
    q = abs(num) // abs(den)
    return q if (num >= 0) == (den > 0) else -q


_image_states = attrgetter("image_states")


class ImageLocality:
    """Scores nodes by the (spread-scaled) size of the pod's images already present there."""

    name = NAME

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.handle = handle
        # The last pod scored and its normalized images: Score runs per node for one pod.
        self._last_pod: Pod | None = None
        self._last_images: tuple[str, ...] = ()
        self._last_empty_score = 0

    def _use_pod(self, pod: Pod) -> None:
        if pod is not self._last_pod:
            self._last_images = _pod_images(pod)
            self._last_pod = pod
            self._last_empty_score = calculate_priority(0, len(pod.init_containers) + len(pod.containers))

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        self._use_pod(pod)
        if not node_info.image_states:  # a node without images: nothing to sum
            return self._last_empty_score
        total_num_nodes = len(self.handle.snapshot.node_infos())
        image_scores = sum_image_scores(node_info.image_states, self._last_images, total_num_nodes)
        return calculate_priority(image_scores, len(pod.init_containers) + len(pod.containers))

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[int]:
        """:meth:`score` for each node at once (hookspecs.WholeListScore)."""
        self._use_pod(pod)
        empty = self._last_empty_score
        if not any(map(_image_states, nodes)):
            return [empty] * len(nodes)
        images = self._last_images
        total_num_nodes = len(self.handle.snapshot.node_infos())
        num_containers = len(pod.init_containers) + len(pod.containers)
        return [calculate_priority(sum_image_scores(states, images, total_num_nodes), num_containers)
                if (states := ni.image_states) else empty for ni in nodes]

    @hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        names = sorted({normalized_image_name(c.image)
                        for c in (*pod.containers, *pod.init_containers)})
        return [SignFragment(IMAGE_NAMES_SIGNER_NAME, names)], None
