# accel_add_backend(NAME <name> SOURCES <src>... [LIBRARIES <lib>...]
#                   [OUTPUT_DIR <dir>] [MANIFEST_DIR <dir>] [NO_INSTALL])
#
# Builds a backend as a MODULE shared object that exports exactly one symbol,
# accel_backend_get_api (hidden visibility plus a linker version script), and
# writes its JSON manifest (abi/manifest.schema.json) so that libaccel finds
# it relative to its own location. Target: accel_backend_<name>.
set(_ACCEL_BACKEND_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

# Writes a manifest (abi/manifest.schema.json); rewrites it only when its
# text changes, so dependants do not rebuild.
function(_accel_write_manifest path name library_path)
  file(CONFIGURE OUTPUT ${path} CONTENT
"{
  \"file_format_version\": \"1.0.0\",
  \"backend\": {
    \"name\": \"${name}\",
    \"library_path\": \"${library_path}\",
    \"abi_major\": 1
  }
}
" @ONLY)
endfunction()

function(accel_add_backend)
  cmake_parse_arguments(ARG "NO_INSTALL;NO_MANIFEST" "NAME;OUTPUT_DIR;MANIFEST_DIR;MANIFEST_NAME" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_NAME)
    message(FATAL_ERROR "accel_add_backend: NAME is required")
  endif()
  if(NOT ARG_NAME MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "accel_add_backend: NAME '${ARG_NAME}' must be lowercase letters, digits and '_'")
  endif()
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${CMAKE_BINARY_DIR}/${ACCEL_BACKEND_LIBDIR})
  endif()
  if(NOT ARG_MANIFEST_DIR)
    set(ARG_MANIFEST_DIR ${CMAKE_BINARY_DIR}/${ACCEL_MANIFEST_DATADIR})
  endif()
  if(NOT ARG_MANIFEST_NAME)
    set(ARG_MANIFEST_NAME ${ARG_NAME})
  endif()
  set(target accel_backend_${ARG_NAME})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE Accel::backend_kit ${ARG_LIBRARIES})
  target_compile_options(${target} PRIVATE ${ACCEL_WARNINGS})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME accel_backend_${ARG_NAME}
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIR}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${_ACCEL_BACKEND_CMAKE_DIR}/backend.map"
    "LINKER:--no-undefined")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${_ACCEL_BACKEND_CMAKE_DIR}/backend.map)

  if(NOT ARG_NO_MANIFEST)
    file(RELATIVE_PATH rel ${ARG_MANIFEST_DIR} ${ARG_OUTPUT_DIR}/libaccel_backend_${ARG_NAME}.so)
    set(manifest ${ARG_MANIFEST_DIR}/${ARG_MANIFEST_NAME}.json)
    _accel_write_manifest(${manifest} ${ARG_NAME} ${rel})
    if(NOT ARG_NO_INSTALL AND COMMAND install)
      file(RELATIVE_PATH irel /${ACCEL_MANIFEST_DATADIR} /${ACCEL_BACKEND_LIBDIR}/libaccel_backend_${ARG_NAME}.so)
      set(imanifest ${CMAKE_CURRENT_BINARY_DIR}/install/${ARG_NAME}.json)
      _accel_write_manifest(${imanifest} ${ARG_NAME} ${irel})
      install(FILES ${imanifest} DESTINATION ${ACCEL_MANIFEST_DATADIR})
    endif()
  endif()
  if(NOT ARG_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${ACCEL_BACKEND_LIBDIR})
  endif()
endfunction()
