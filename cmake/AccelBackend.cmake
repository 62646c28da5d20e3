# accel_add_backend(NAME <name> SOURCES <src>... [LIBRARIES <lib>...]
#                   [OUTPUT_DIR <dir>] [MANIFEST_DIR <dir>] [MANIFEST_NAME <stem>]
#                   [NO_INSTALL] [NO_MANIFEST])
#
# Builds a backend as a MODULE shared object that exports exactly one symbol,
# accel_backend_get_api (hidden visibility plus a linker version script), and
# writes its JSON manifest (abi/manifest.schema.json, library_path relative to
# the manifest). Target: accel_backend_<name>. Works in Accel's own tree and,
# through find_package(Accel), in any other project (docs/install.md).
#
# Defaults:
#   OUTPUT_DIR    ${ACCEL_BACKEND_OUTPUT_DIR} when set (Accel's tree sets it to
#                 <build>/lib/accel/backends), else ${CMAKE_CURRENT_BINARY_DIR}
#   MANIFEST_DIR  ${ACCEL_BACKEND_MANIFEST_DIR} when set (Accel's tree:
#                 <build>/share/accel/backends.d), else ${CMAKE_CURRENT_BINARY_DIR}
#   install       the library to ${ACCEL_BACKEND_LIBDIR} (default
#                 ${CMAKE_INSTALL_LIBDIR}/accel/backends) and a manifest to
#                 ${ACCEL_MANIFEST_DATADIR} (default
#                 ${CMAKE_INSTALL_DATADIR}/accel/backends.d) of the project's
#                 own install prefix; NO_INSTALL skips both.
#
# Needs the target Accel::backend_kit (the ABI header accel_backend.h and
# accel.h), which Accel's tree defines and find_package(Accel) imports.
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
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "accel_add_backend: SOURCES is required")
  endif()
  if(NOT TARGET Accel::backend_kit)
    message(FATAL_ERROR "accel_add_backend: the target Accel::backend_kit is missing; call find_package(Accel) first")
  endif()
  if(NOT ARG_OUTPUT_DIR)
    if(ACCEL_BACKEND_OUTPUT_DIR)
      set(ARG_OUTPUT_DIR ${ACCEL_BACKEND_OUTPUT_DIR})
    else()
      set(ARG_OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR})
    endif()
  endif()
  if(NOT ARG_MANIFEST_DIR)
    if(ACCEL_BACKEND_MANIFEST_DIR)
      set(ARG_MANIFEST_DIR ${ACCEL_BACKEND_MANIFEST_DIR})
    else()
      set(ARG_MANIFEST_DIR ${CMAKE_CURRENT_BINARY_DIR})
    endif()
  endif()
  get_filename_component(ARG_OUTPUT_DIR ${ARG_OUTPUT_DIR} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
  get_filename_component(ARG_MANIFEST_DIR ${ARG_MANIFEST_DIR} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
  if(NOT ARG_MANIFEST_NAME)
    set(ARG_MANIFEST_NAME ${ARG_NAME})
  endif()
  # Install destinations, relative to the installing project's prefix.
  if(NOT DEFINED CMAKE_INSTALL_LIBDIR OR NOT DEFINED CMAKE_INSTALL_DATADIR)
    include(GNUInstallDirs)
  endif()
  set(libdest ${ACCEL_BACKEND_LIBDIR})
  if(NOT libdest)
    set(libdest ${CMAKE_INSTALL_LIBDIR}/accel/backends)
  endif()
  set(manifestdest ${ACCEL_MANIFEST_DATADIR})
  if(NOT manifestdest)
    set(manifestdest ${CMAKE_INSTALL_DATADIR}/accel/backends.d)
  endif()

  set(target accel_backend_${ARG_NAME})
  set(library libaccel_backend_${ARG_NAME}.so)
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE Accel::backend_kit ${ARG_LIBRARIES})
  target_compile_options(${target} PRIVATE ${ACCEL_WARNINGS})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    SUFFIX ".so"
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
    file(RELATIVE_PATH rel ${ARG_MANIFEST_DIR} ${ARG_OUTPUT_DIR}/${library})
    _accel_write_manifest(${ARG_MANIFEST_DIR}/${ARG_MANIFEST_NAME}.json ${ARG_NAME} ${rel})
    if(NOT ARG_NO_INSTALL)
      # Relative between the two destinations, so the installed tree
      # relocates; an absolute destination gives an absolute path.
      if(IS_ABSOLUTE ${manifestdest} OR IS_ABSOLUTE ${libdest})
        set(irel ${libdest}/${library})
        if(NOT IS_ABSOLUTE ${libdest})
          set(irel ${CMAKE_INSTALL_PREFIX}/${irel})
        endif()
      else()
        file(RELATIVE_PATH irel /${manifestdest} /${libdest}/${library})
      endif()
      set(imanifest ${CMAKE_CURRENT_BINARY_DIR}/install/${ARG_MANIFEST_NAME}.json)
      _accel_write_manifest(${imanifest} ${ARG_NAME} ${irel})
      install(FILES ${imanifest} DESTINATION ${manifestdest})
    endif()
  endif()
  if(NOT ARG_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${libdest})
  endif()
endfunction()
