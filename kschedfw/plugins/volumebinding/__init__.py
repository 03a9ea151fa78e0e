"""VolumeBinding plugin package (upstream ``pkg/scheduler/framework/plugins/volumebinding``).

Also home of the storage helpers and the CSI translation the other volume plugins share.
"""

from kschedfw.plugins.volumebinding.volume_binding import VolumeBinding

__all__ = ["VolumeBinding"]
