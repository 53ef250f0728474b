"""A --check value encoded as JSON that perflab compares across variants. Standard library only,
Python 3.7+: it runs in the variant's interpreter, next to statement_worker.py."""

import hashlib

_EXACT_CHARS = 4096  # a text (or repr) longer than this is sent as a digest and its start
_ARRAY_ELEMENTS = 1 << 20  # an array with more elements is sent as a digest and a stride


class Uncomparable(Exception):
    """A --check value perflab cannot compare across processes."""


def _digest(text):
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _exact(type_name, text):
    encoded = {"kind": "exact", "type": type_name, "text": text}
    if len(text) > _EXACT_CHARS:
        encoded["text"] = text[:200]
        encoded["digest"] = _digest(text)
        encoded["length"] = len(text)
    return encoded


def _flatten(data, out):
    if isinstance(data, (list, tuple)):
        for item in data:
            _flatten(item, out)
    else:
        out.append(data)


def _shape_of(data):
    shape = []
    while isinstance(data, (list, tuple)):
        shape.append(len(data))
        data = data[0] if data else None
    return shape


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _array(type_name, data, shape):
    flat = []
    _flatten(data, flat)
    flat = [[v.real, v.imag] if isinstance(v, complex) else v for v in flat]
    if flat and isinstance(flat[0], list):  # complex: a trailing axis of (real, imaginary)
        shape = list(shape) + [2]
        flat = [part for pair in flat for part in pair]
    if not all(_is_number(v) for v in flat):
        return None
    encoded = {"kind": "array", "type": type_name, "shape": list(shape), "values": flat}
    if len(flat) > _ARRAY_ELEMENTS:
        stride = -(-len(flat) // _ARRAY_ELEMENTS)
        encoded["values"] = flat[::stride]
        encoded["stride"] = stride
        encoded["size"] = len(flat)
        encoded["digest"] = _digest(repr(flat))
    return encoded


def encode_value(value):
    """A --check value as JSON perflab compares across variants (standard library only)."""
    type_name = type(value).__module__ + "." + type(value).__qualname__
    type_name = type_name.replace("builtins.", "")
    if value is None or isinstance(value, (bool, int, str)):
        return _exact(type_name, value if isinstance(value, str) else repr(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _exact(type_name, bytes(value).hex())
    if isinstance(value, (float, complex)):
        return _array(type_name, [value], [])
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu()
    if not hasattr(value, "tolist") and hasattr(value, "__array__"):
        value = value.__array__()
    if hasattr(value, "tolist"):
        data = value.tolist()
        shape = getattr(value, "shape", None)
        shape = [int(n) for n in shape] if shape is not None else _shape_of(data)
        if "dtype" in dir(value):
            type_name += "[%s]" % (value.dtype,)
        encoded = _array(type_name, data, shape)
        return encoded if encoded is not None else _exact(type_name, repr(data))
    if isinstance(value, (list, tuple)):
        encoded = _array(type_name, value, _shape_of(value))
        if encoded is not None and value:
            return encoded
    text = repr(value)
    if " at 0x" in text:
        raise Uncomparable(
            "the value is a %s whose repr names its address (%s), which differs in every "
            "process: return something comparable instead (a number, a string, a list, an "
            "array: e.g. a field of it, or vars() of it), or give %s a __repr__ that shows "
            "its content" % (type_name, text[:120], type(value).__qualname__)
        )
    return _exact(type_name, text)
