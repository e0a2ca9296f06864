# The `loopr` executable links RocksDB from its static archive; everything else (the modules'
# tests, the benches) links librocksdb.so as before.
#
# Why: every `loopr` command is a fresh process, and the dynamic loader's symbol binding is most
# of its start (issue 32). librocksdb.so has ~14,000 data relocations against symbols (vtables,
# type info) that the loader binds at every start: ~7,700 of the ~18,000 symbol lookups of
# `loopr --version`. Linked statically, the linker resolves them.
#
# Only RocksDB: libgit2 (with its libssh2 and mbedTLS) and OpenSSL would save more, but a Debian
# package must not embed copies of them (lintian: embedded-library), and OpenSSL's security
# updates must reach loopr without a rebuild.
#
# How: the store module links loopr_dep_rocksdb, which resolves, for the target being linked, to
# RocksDB::rocksdb when that target has the property LOOPR_STATIC_DEPS set (only `loopr`) and to
# RocksDB::rocksdb-shared otherwise. -DLOOPR_STATIC_DEPS=OFF, or no librocksdb.a, links shared.
option(LOOPR_STATIC_DEPS "Link the loopr executable with RocksDB's static library" ON)

add_library(loopr_dep_rocksdb INTERFACE)
if(LOOPR_STATIC_DEPS AND TARGET RocksDB::rocksdb)
  get_target_property(_loopr_rocksdb_a RocksDB::rocksdb IMPORTED_LOCATION_NONE)
  if(NOT _loopr_rocksdb_a OR NOT EXISTS "${_loopr_rocksdb_a}")
    get_target_property(_loopr_rocksdb_a RocksDB::rocksdb LOCATION)
  endif()
endif()
if(LOOPR_STATIC_DEPS AND _loopr_rocksdb_a AND EXISTS "${_loopr_rocksdb_a}")
  set(_loopr_static "$<BOOL:$<TARGET_PROPERTY:LOOPR_STATIC_DEPS>>")
  target_link_libraries(loopr_dep_rocksdb INTERFACE
    "$<${_loopr_static}:RocksDB::rocksdb>"
    "$<$<NOT:${_loopr_static}>:RocksDB::rocksdb-shared>")
else()
  if(LOOPR_STATIC_DEPS)
    message(STATUS "loopr: no static RocksDB library; linking librocksdb.so")
  endif()
  target_link_libraries(loopr_dep_rocksdb INTERFACE RocksDB::rocksdb-shared)
endif()
