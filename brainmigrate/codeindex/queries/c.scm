; include: _c_common
