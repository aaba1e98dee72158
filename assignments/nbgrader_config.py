# nbgrader course configuration for the seqgrade course. The course root is this folder.
import os

from grader.course.nbgrader_autograde import sanitize_preprocessors

c = get_config()  # noqa: F821
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "sequence-models"
# Hidden test cells call seqgrade; nbgrader's own execution timeout per cell:
c.Execute.timeout = 120
# A submitted read-only cell is compared with the text the student was given (the hidden tests removed),
# so "Attribute 'checksum' ... has changed!" means the student edited it (grader/course/nbgrader_autograde.py).
c.Autograde.sanitize_preprocessors = sanitize_preprocessors()
