(help list)
(help steel/time steel/time)
