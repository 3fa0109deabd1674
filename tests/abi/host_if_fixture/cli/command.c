/* a command asking the host itself */
#  elif defined(__APPLE__)
