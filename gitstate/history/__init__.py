"""What history says: the fold from commits to roster, vacancies, inbox and situations; the
index; verify."""
