"""What namespace operations return to a Python guest: the host's plain data, readable the ways
py-code-mode's agents read it as well.

- Record: a dict (`w["name"]`) that also reads as attributes (`w.name`, as py-code-mode's
  NamedTuples do), and by the snake_case name of a camelCase key (`a["created_at"]` for
  `createdAt`, `r.already_present` for `alreadyPresent`). It is a real dict: equality, JSON,
  repr and iteration are a dict's.
- ParamList: a workflow's or recipe's parameters, a list of {name, type, required, ...} dicts that
  also answers py-code-mode's {name: description or type} mapping (`params["n"]`, `"n" in params`,
  `params.items()`); iterating gives the dicts.
- DepList: deps.list()'s entries; `"pandas" in deps.list()` matches a name or a spec.
- Removal: deps.remove()'s {removed, note}; true only when something was removed (py-code-mode
  returns a bool).

Only metadata is wrapped: tool results, loaded artifacts and workflow results stay what they are.
"""


def _camel(key):
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class Record(dict):
    __slots__ = ()

    def __missing__(self, key):
        if isinstance(key, str) and "_" in key:
            alias = _camel(key)
            if alias != key and dict.__contains__(self, alias):
                return dict.__getitem__(self, alias)
        raise KeyError(key)

    def __getattr__(self, key):
        if key.startswith("__"):
            raise AttributeError(key)
        try:
            return self[key]
        except KeyError:
            raise AttributeError("%r has no field %r; it has: %s" % (type(self).__name__, key, ", ".join(map(str, self)))) from None

    def __contains__(self, key):
        if dict.__contains__(self, key):
            return True
        return isinstance(key, str) and "_" in key and dict.__contains__(self, _camel(key))

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


class Removal(Record):
    __slots__ = ()

    def __bool__(self):
        return bool(self.get("removed"))


class ParamList(list):
    def _find(self, name):
        for p in self:
            if isinstance(p, dict) and p.get("name") == name:
                return p
        return None

    @staticmethod
    def _shown(p):
        return p.get("description") or p.get("type")

    def __getitem__(self, key):
        if isinstance(key, str):
            p = self._find(key)
            if p is None:
                raise KeyError(key)
            return self._shown(p)
        return list.__getitem__(self, key)

    def __contains__(self, key):
        if isinstance(key, str):
            return self._find(key) is not None
        return list.__contains__(self, key)

    def keys(self):
        return [p.get("name") for p in self if isinstance(p, dict)]

    def values(self):
        return [self._shown(p) for p in self if isinstance(p, dict)]

    def items(self):
        return [(p.get("name"), self._shown(p)) for p in self if isinstance(p, dict)]

    def get(self, key, default=None):
        p = self._find(key)
        return default if p is None else self._shown(p)


class DepList(list):
    def __contains__(self, key):
        if isinstance(key, str):
            return any(isinstance(d, dict) and key in (d.get("name"), d.get("spec")) for d in self)
        return list.__contains__(self, key)


def record(value):
    """Dicts become Records (their "params" lists ParamLists), recursively through lists."""
    if isinstance(value, dict):
        out = Record()
        for k, v in value.items():
            out[k] = ParamList(record(p) for p in v) if k == "params" and isinstance(v, list) else record(v)
        return out
    if isinstance(value, list):
        return [record(v) for v in value]
    return value


def dep_list(value):
    return DepList(record(value)) if isinstance(value, list) else value


def removal(value):
    return Removal(value) if isinstance(value, dict) else value
