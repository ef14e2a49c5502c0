# SPDX-License-Identifier: Apache-2.0
# Install rules: the library, its public headers (with the generated version.h), the CLI
# with its man page and bash completion, a CMake package (find_package(stguard CONFIG) -> stguard::stguard) and a pkg-config
# file. Everything is relative to the install prefix, so `cmake --install build --prefix P`
# gives a package that works from P.
include(CMakePackageConfigHelpers)

set(STGUARD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/stguard)

install(TARGETS stguard EXPORT stguardTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/stguard ${STGUARD_GENERATED_INCLUDE_DIR}/stguard
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
if(STGUARD_BUILD_CLI)
  install(TARGETS stguard_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${STGUARD_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  # bash-completion loads completions/<command> on first use of the command.
  install(FILES ${STGUARD_BASH_COMPLETION}
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME stguard)
endif()

install(EXPORT stguardTargets NAMESPACE stguard:: DESTINATION ${STGUARD_CMAKE_DIR}
        FILE stguardTargets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/stguardConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/stguardConfig.cmake
                              INSTALL_DESTINATION ${STGUARD_CMAKE_DIR})
# 0.x: any minor version may break the API, so only the same major.minor is compatible.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(STGUARD_COMPATIBILITY SameMinorVersion)
else()
  set(STGUARD_COMPATIBILITY SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/stguardConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY ${STGUARD_COMPATIBILITY})
install(FILES ${PROJECT_BINARY_DIR}/stguardConfig.cmake
              ${PROJECT_BINARY_DIR}/stguardConfigVersion.cmake
        DESTINATION ${STGUARD_CMAKE_DIR})

# pkg-config. The file finds the prefix from its own location (${pcfiledir}), so it stays
# right when the install prefix is chosen at install time. A static libstguard needs the
# C++ runtime on the link line of a C program; a shared one records it itself.
# (An absolute CMAKE_INSTALL_LIBDIR or INCLUDEDIR is written as it is.)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(STGUARD_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH STGUARD_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
  string(REGEX REPLACE "/$" "" STGUARD_PC_TO_PREFIX "${STGUARD_PC_TO_PREFIX}")
  set(STGUARD_PC_PREFIX "\${pcfiledir}/${STGUARD_PC_TO_PREFIX}")
endif()
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(STGUARD_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(STGUARD_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
# The C++ runtime (the library needs nothing else).
set(STGUARD_PC_LIBS_PRIVATE "")
foreach(lib IN LISTS CMAKE_CXX_IMPLICIT_LINK_LIBRARIES)
  if(NOT lib MATCHES "^(c|gcc|gcc_s|gcc_eh)$")  # what every C link already has
    string(APPEND STGUARD_PC_LIBS_PRIVATE " -l${lib}")
  endif()
endforeach()
if(STGUARD_LIBRARY_TYPE STREQUAL "STATIC_LIBRARY")
  # Only the archive is installed: every consumer links statically and needs them.
  set(STGUARD_PC_LIBS "-L\${libdir} -lstguard${STGUARD_PC_LIBS_PRIVATE}")
  set(STGUARD_PC_LIBS_PRIVATE "")
else()
  set(STGUARD_PC_LIBS "-L\${libdir} -lstguard")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/stguard.pc.in ${PROJECT_BINARY_DIR}/stguard.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/stguard-cxx.pc.in ${PROJECT_BINARY_DIR}/stguard-cxx.pc
               @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/stguard.pc ${PROJECT_BINARY_DIR}/stguard-cxx.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
