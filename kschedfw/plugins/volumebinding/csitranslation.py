"""In-tree volume to CSI translation, as far as the scheduler needs it (upstream
``k8s.io/csi-translation-lib``).

The scheduler uses the translation for two things: NodeVolumeLimits counts migrated in-tree
volumes against the CSI driver's attach limit (driver name + volume handle), and VolumeBinding
checks a migrated PV's node affinity after its zone labels became CSI topology. Only those parts
are ported; storage-class translation and CSI -> in-tree translation are not needed here.
"""

from __future__ import annotations

import re
import weakref
from typing import TYPE_CHECKING, Any, Mapping
from urllib.parse import urlparse

import attrs

from kschedfw.api.selectors import IN, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kschedfw.plugins.volumebinding.storagehelpers import (LABEL_BETA_REGION, LABEL_BETA_ZONE,
                                                           LABEL_MULTI_ZONE_DELIMITER, LABEL_REGION,
                                                           LABEL_ZONE)

if TYPE_CHECKING:
    from kschedfw.api import PersistentVolume, Volume

AWS_EBS_DRIVER = "ebs.csi.aws.com"
AWS_EBS_IN_TREE = "kubernetes.io/aws-ebs"
GCE_PD_DRIVER = "pd.csi.storage.gke.io"
GCE_PD_IN_TREE = "kubernetes.io/gce-pd"
CINDER_DRIVER = "cinder.csi.openstack.org"
CINDER_IN_TREE = "kubernetes.io/cinder"
AZURE_DISK_DRIVER = "disk.csi.azure.com"
AZURE_DISK_IN_TREE = "kubernetes.io/azure-disk"
AZURE_FILE_DRIVER = "file.csi.azure.com"
AZURE_FILE_IN_TREE = "kubernetes.io/azure-file"
VSPHERE_DRIVER = "csi.vsphere.vmware.com"
VSPHERE_IN_TREE = "kubernetes.io/vsphere-volume"
PORTWORX_DRIVER = "pxd.portworx.com"
PORTWORX_IN_TREE = "kubernetes.io/portworx-volume"

_UNSPECIFIED = "UNSPECIFIED"
_AWS_VOLUME_RE = re.compile(r"^vol-[^/]*$")


class TranslationError(Exception):
    """A volume the translation library cannot translate (its message is upstream's)."""


@attrs.frozen
class InTreePlugin:
    in_tree_name: str
    csi_driver: str
    source_key: str                 # the volume-source key in pod volumes and PV specs
    topology_key: str | None        # CSI zone key PV topology is rewritten to (None: untouched)


PLUGINS: tuple[InTreePlugin, ...] = (
    InTreePlugin(GCE_PD_IN_TREE, GCE_PD_DRIVER, "gcePersistentDisk", "topology.gke.io/zone"),
    InTreePlugin(AWS_EBS_IN_TREE, AWS_EBS_DRIVER, "awsElasticBlockStore",
                 f"topology.{AWS_EBS_DRIVER}/zone"),
    InTreePlugin(CINDER_IN_TREE, CINDER_DRIVER, "cinder", f"topology.{CINDER_DRIVER}/zone"),
    InTreePlugin(AZURE_DISK_IN_TREE, AZURE_DISK_DRIVER, "azureDisk", None),
    InTreePlugin(AZURE_FILE_IN_TREE, AZURE_FILE_DRIVER, "azureFile", None),
    InTreePlugin(VSPHERE_IN_TREE, VSPHERE_DRIVER, "vsphereVolume", None),
    InTreePlugin(PORTWORX_IN_TREE, PORTWORX_DRIVER, "portworxVolume", None),
)
_BY_SOURCE = {p.source_key: p for p in PLUGINS}
_BY_IN_TREE = {p.in_tree_name: p for p in PLUGINS}


@attrs.frozen
class CSISource:
    driver: str
    volume_handle: str


# --------------------------------------------------------------------------- lookups

def plugin_for_volume(volume: Volume) -> InTreePlugin | None:
    """CanSupportInline: the in-tree plugin of an inline pod volume, if it has migration logic."""
    return _BY_SOURCE.get(getattr(volume, "source", ""))


def plugin_for_pv(pv: PersistentVolume) -> InTreePlugin | None:
    """CanSupport: the in-tree plugin of a PV source, if it has migration logic."""
    return _BY_SOURCE.get(getattr(pv, "source", ""))


def is_inline_migratable(volume: Volume) -> bool:
    return plugin_for_volume(volume) is not None


def is_migratable_in_tree_plugin_by_name(name: str) -> bool:
    return name in _BY_IN_TREE


def csi_name_from_in_tree_name(name: str) -> str:
    plugin = _BY_IN_TREE.get(name)
    if plugin is None:
        raise TranslationError(f"could not find CSI Driver name for plugin {name}")
    return plugin.csi_driver


# --------------------------------------------------------------------------- volume handles

def ebs_volume_id(kubernetes_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: ``aws://<zone>/vol-x`` -> ``vol-x``; others unchanged."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    try:
        url = urlparse(kubernetes_id)
    except ValueError as exc:
        raise TranslationError(f"Invalid disk name ({kubernetes_id}): {exc}") from None
    aws_id = url.path.strip("/")
    if not _AWS_VOLUME_RE.match(aws_id):
        raise TranslationError(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _gce_region_from_zones(zones: list[str]) -> str:
    if not zones:
        raise TranslationError("no zones specified")
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(
                f"zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {zone}")
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        raise TranslationError(f"multiple or no regions gotten from zones, got: {sorted(regions)}")
    return regions.pop()


def _azure_disk_handle(details: Mapping[str, Any]) -> str:
    kind = details.get("kind") or "Shared"      # the apiserver defaults azureDisk.kind to Shared
    if str(kind).lower() != "managed":
        raise TranslationError(f"kind({kind}) is not supported in csi migration")
    return str(details.get("diskURI") or "")


def _handle(plugin: InTreePlugin, details: Mapping[str, Any], labels: Mapping[str, str] | None) -> str:
    key = plugin.source_key
    if key == "awsElasticBlockStore":
        try:
            return ebs_volume_id(str(details.get("volumeID") or ""))
        except TranslationError as exc:
            raise TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID {exc}") from None
    if key == "gcePersistentDisk":
        pd_name = str(details.get("pdName") or "")
        if labels is None:      # inline volumes carry no zone information
            return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pd_name}"
        zones_label = labels.get(LABEL_BETA_ZONE) or labels.get(LABEL_ZONE) or ""
        zones = zones_label.split(LABEL_MULTI_ZONE_DELIMITER)
        if len(zones) == 1 and zones[0]:
            return f"projects/{_UNSPECIFIED}/zones/{zones[0]}/disks/{pd_name}"
        if len(zones) > 1:
            try:
                region = _gce_region_from_zones(zones)
            except TranslationError as exc:
                raise TranslationError(f"failed to get region from zones: {exc}") from None
            return f"projects/{_UNSPECIFIED}/regions/{region}/disks/{pd_name}"
        return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pd_name}"
    if key == "azureDisk":
        return _azure_disk_handle(details)
    if key == "vsphereVolume":
        return str(details.get("volumePath") or "")
    if key == "azureFile":
        return str(details.get("shareName") or "")   # only the driver is used for azureFile
    return str(details.get("volumeID") or "")        # cinder, portworxVolume


def translate_inline_volume(volume: Volume) -> CSISource:
    """TranslateInTreeInlineVolumeToCSI, reduced to the CSI driver and volume handle."""
    plugin = plugin_for_volume(volume)
    if plugin is None:
        raise TranslationError(f"could not find in-tree plugin translation logic for {volume.name!r}")
    return CSISource(plugin.csi_driver, _handle(plugin, volume.details or {}, None))


# --------------------------------------------------------------------------- PV topology

#: a node selector term, mutable: its expressions as ``[key, operator, values]``, and its match
#: fields
_Term = tuple[list[list[Any]], tuple[NodeSelectorRequirement, ...]]


def _terms(selector: NodeSelector | None) -> list[_Term]:
    """Mutable copy: per term, its expressions as [key, op, values] and its match fields."""
    if selector is None:
        return []
    return [([[r.key, r.operator, tuple(r.values)] for r in t.match_expressions], t.match_fields)
            for t in selector.terms]


def _selector(terms: list[_Term]) -> NodeSelector:
    return NodeSelector(tuple(
        NodeSelectorTerm(tuple(NodeSelectorRequirement(k, op, tuple(v)) for k, op, v in exprs), fields)
        for exprs, fields in terms))


def _key_exists(terms: list[_Term], key: str) -> bool:
    return any(expr[0] == key for exprs, _ in terms for expr in exprs)


def _topology_values(terms: list[_Term], key: str) -> list[str]:
    return sorted({v for exprs, _ in terms for expr in exprs if expr[0] == key for v in expr[2]})


def _replace_key(terms: list[_Term], old: str, new: str) -> None:
    for exprs, _ in terms:
        for expr in exprs:
            if expr[0] == old:
                expr[0] = new


def _add_topology(terms: list[_Term], key: str, zones: list[str]) -> list[_Term]:
    zones = sorted({z.strip() for z in zones if z.strip()})
    if not zones:
        return terms            # upstream returns an error here that its caller ignores
    if not terms:
        terms = [([], ())]
    for exprs, _ in terms:
        exprs.append([key, IN, tuple(zones)])
    return terms


def _topology_labels(pv: PersistentVolume, terms: list[_Term]) -> tuple[str, str]:
    if _key_exists(terms, LABEL_ZONE):
        return LABEL_ZONE, LABEL_REGION
    if _key_exists(terms, LABEL_BETA_ZONE):
        return LABEL_BETA_ZONE, LABEL_BETA_REGION
    if LABEL_ZONE in pv.labels:
        return LABEL_ZONE, LABEL_REGION
    if LABEL_BETA_ZONE in pv.labels:
        return LABEL_BETA_ZONE, LABEL_BETA_REGION
    return LABEL_ZONE, LABEL_REGION


def _translate_topology(pv: PersistentVolume, csi_key: str) -> NodeSelector | None:
    """translateTopologyFromInTreeToCSI applied to the PV's required node affinity."""
    terms = _terms(pv.node_affinity)
    zone_label, region_label = _topology_labels(pv, terms)
    if _topology_values(terms, zone_label):
        _replace_key(terms, zone_label, csi_key)
    elif zone_label in pv.labels:
        zones = pv.labels[zone_label].split(LABEL_MULTI_ZONE_DELIMITER)
        terms = _add_topology(terms, csi_key, zones)
    if region_label == LABEL_BETA_REGION and _topology_values(terms, region_label):
        _replace_key(terms, region_label, LABEL_REGION)
    if not terms and pv.node_affinity is None:
        return None
    return _selector(terms)


#: id(PV) -> (the PV, its translation): Filter translates every in-tree volume of every pod on
#: every node it looks at, and a stored PV object never changes (an update is a new object)
_TRANSLATED: dict[int, tuple["weakref.ref[PersistentVolume]", tuple[PersistentVolume, CSISource]]] = {}
_TRANSLATED_MAX = 1 << 16


def translate_pv(pv: PersistentVolume) -> tuple[PersistentVolume, CSISource]:
    """TranslateInTreePVToCSI: the PV as its CSI driver sees it (source and node affinity)."""
    entry = _TRANSLATED.get(id(pv))
    if entry is not None and entry[0]() is pv:
        return entry[1]
    result = _translate_pv(pv)
    if len(_TRANSLATED) >= _TRANSLATED_MAX:
        _TRANSLATED.clear()
    _TRANSLATED[id(pv)] = (weakref.ref(pv), result)
    return result


def _translate_pv(pv: PersistentVolume) -> tuple[PersistentVolume, CSISource]:
    plugin = plugin_for_pv(pv)
    if plugin is None:
        raise TranslationError(f"could not find in-tree plugin translation logic for {pv.name!r}")
    source = CSISource(plugin.csi_driver, _handle(plugin, pv.details or {}, dict(pv.labels)))
    affinity = pv.node_affinity
    if plugin.topology_key is not None:
        affinity = _translate_topology(pv, plugin.topology_key)
    translated = attrs.evolve(pv, node_affinity=affinity, csi_driver=source.driver, source="csi",
                              details={"driver": source.driver, "volumeHandle": source.volume_handle})
    return translated, source
