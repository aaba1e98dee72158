# nbgrader course configuration for the seqgrade course. The course root is this folder.
c = get_config()  # noqa: F821
c.CourseDirectory.root = "."
c.CourseDirectory.course_id = "sequence-models"
# Hidden test cells call seqgrade; nbgrader's own execution timeout per cell:
c.Execute.timeout = 120
