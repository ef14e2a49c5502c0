# SPDX-License-Identifier: Apache-2.0
# Writes error_help.inc from stguard/error_codes.def: for each row, in order, the comment
# written just above it as one C string literal (ErrorCodeHelp, src/front/sarif.cc), so
# that the help a SARIF rule carries is the error list's own text, never a copy.
# Included by CMakeLists.txt with ERROR_CODES_DEF and ERROR_HELP_OUTPUT set.
file(READ ${ERROR_CODES_DEF} text)
# CMake lists split on ';': hide them before splitting the text into lines.
string(REPLACE ";" "@SEMI@" text "${text}")
string(REPLACE "\n" ";" lines "${text}")
set(pending "")
set(out "// Generated from stguard/error_codes.def by cmake/error_help.cmake: do not edit.\n")
foreach(line IN LISTS lines)
  if(line MATCHES "^// ==" OR NOT line MATCHES "^(//|STGUARD_ERROR_CODE)")
    set(pending "")
  elseif(line MATCHES "^// ?(.*)$")
    if(pending STREQUAL "")
      set(pending "${CMAKE_MATCH_1}")
    else()
      set(pending "${pending} ${CMAKE_MATCH_1}")
    endif()
  else()
    string(REPLACE "\\" "\\\\" pending "${pending}")
    string(REPLACE "\"" "\\\"" pending "${pending}")
    string(REPLACE "@SEMI@" ";" pending "${pending}")
    string(APPEND out "\"${pending}\",\n")
    set(pending "")
  endif()
endforeach()
file(WRITE ${ERROR_HELP_OUTPUT}.tmp "${out}")
configure_file(${ERROR_HELP_OUTPUT}.tmp ${ERROR_HELP_OUTPUT} COPYONLY)
