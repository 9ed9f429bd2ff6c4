"""MindSpore's ``.ckpt`` file format on the ``protobuf`` runtime.

A ``.ckpt`` file is a sequence of serialized ``Checkpoint`` messages, one per tensor (or per
slice of a tensor above 512 MiB), written back to back; since ``value`` is a repeated field,
parsing the whole file as one ``Checkpoint`` yields every value in file order. The schema is
MindSpore's ``checkpoint.proto`` (proto2):

    message Checkpoint {
      message Value { required string tag = 1;
                      oneof value { TensorProto tensor = 2; MapTensorProto maptensor = 3; } }
      repeated Value value = 1; }
    message TensorProto { repeated int64 dims = 1; required string tensor_type = 2;
                          required bytes tensor_content = 3; }
    message MapTensorProto { repeated TensorProto tensor = 1; }

The descriptor is built here in its own pool (so a protobuf-generated MindSpore module in the
same process cannot clash), and protobuf does all encoding and decoding.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["Checkpoint"]

_F = descriptor_pb2.FieldDescriptorProto


def _field(
    message, name: str, number: int, kind: int, label: int, type_name: str = "", oneof: int | None = None
) -> None:
    field = message.field.add(name=name, number=number, type=kind, label=label)
    if type_name:
        field.type_name = type_name
    if oneof is not None:
        field.oneof_index = oneof


def _file() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(name="checkpoint.proto", syntax="proto2")
    checkpoint = proto.message_type.add(name="Checkpoint")
    value = checkpoint.nested_type.add(name="Value")
    _field(value, "tag", 1, _F.TYPE_STRING, _F.LABEL_REQUIRED)
    value.oneof_decl.add(name="value")
    _field(value, "tensor", 2, _F.TYPE_MESSAGE, _F.LABEL_OPTIONAL, ".TensorProto", oneof=0)
    _field(value, "maptensor", 3, _F.TYPE_MESSAGE, _F.LABEL_OPTIONAL, ".MapTensorProto", oneof=0)
    _field(checkpoint, "value", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, ".Checkpoint.Value")
    tensor = proto.message_type.add(name="TensorProto")
    _field(tensor, "dims", 1, _F.TYPE_INT64, _F.LABEL_REPEATED)
    _field(tensor, "tensor_type", 2, _F.TYPE_STRING, _F.LABEL_REQUIRED)
    _field(tensor, "tensor_content", 3, _F.TYPE_BYTES, _F.LABEL_REQUIRED)
    map_tensor = proto.message_type.add(name="MapTensorProto")
    _field(map_tensor, "tensor", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, ".TensorProto")
    return proto


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file())
Checkpoint = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("Checkpoint"))
