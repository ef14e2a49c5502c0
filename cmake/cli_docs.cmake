# SPDX-License-Identifier: Apache-2.0
# cmake -DCLI=<stguard> -DOPTION=--man|--bash-completion -DOUTPUT=<file> -P cli_docs.cmake
# Writes what the built CLI prints for OPTION (its man page or its bash completion script,
# both written from the command table) to OUTPUT, through a temporary file so that a
# failed run leaves no half-written OUTPUT for the install to pick up.
execute_process(COMMAND ${CLI} ${OPTION} OUTPUT_FILE ${OUTPUT}.tmp RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  file(REMOVE ${OUTPUT}.tmp)
  message(FATAL_ERROR "${CLI} ${OPTION} failed: ${status}")
endif()
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
